// Google Benchmark's JSON format (`--benchmark_format=json`), so tools that track Google
// Benchmark results (github-action-benchmark, bencher, compare.py) can track commbench. Each
// record is one benchmark named collective/backend/algorithm/dtype/op/placement[/root:N]/bytes;
// real_time is the mean time per operation in microseconds and the other figures are counters.
#include <map>
#include <ostream>
#include <thread>

#include "report/writer.hpp"

namespace cb {

namespace {

using json = nlohmann::ordered_json;  // keys in Google Benchmark's order

std::string family_name(const ResultRecord& r) {
  std::string name = r.collective + "/" + r.backend + "/" + r.algorithm + "/" + r.dtype + "/" +
                     r.op + "/" + r.placement;
  if (r.root >= 0) name += "/root:" + std::to_string(r.root);
  return name;
}

class GbenchWriter : public Writer {
 public:
  explicit GbenchWriter(std::ostream& out) : out_(out) {}

  void begin(const RunMeta& meta) override {
    context_ = {{"date", meta.start_time},
                {"host_name", meta.hosts.empty() ? std::string() : meta.hosts.front()},
                {"executable", "commbench"},
                {"num_cpus", std::thread::hardware_concurrency()},
                {"commbench_version", meta.version},
                {"git_commit", meta.git_commit},
                {"command_line", meta.command_line},
                {"hosts", meta.hosts},
                {"nranks", meta.nranks},
                {"nnodes", meta.nnodes},
                {"ranks_per_node", meta.ranks_per_node},
                {"libraries", meta.libraries},
                {"environment", meta.environment}};
  }

  void add(const ResultRecord& r) override {
    std::string family = family_name(r);
    auto [it, fresh] = families_.emplace(family, std::make_pair(families_.size(), 0));
    std::string name = family + "/" + std::to_string(r.bytes);
    // No CPU time is measured: cpu_time repeats real_time so readers that need it find it.
    json b = {{"name", name},
              {"family_index", it->second.first},
              {"per_family_instance_index", it->second.second++},
              {"run_name", name},
              {"run_type", "iteration"},
              {"repetitions", 1},
              {"repetition_index", 0},
              {"threads", 1},
              {"iterations", r.iters},
              {"real_time", r.time_us},
              {"cpu_time", r.time_us},
              {"time_unit", "us"},
              {"label", r.library},
              {"bytes", r.bytes},
              {"count", r.count},
              {"nranks", r.nranks},
              {"nnodes", r.nnodes},
              {"min_us", r.min_us},
              {"p50_us", r.p50_us},
              {"p99_us", r.p99_us},
              {"max_us", r.max_us},
              {"cv", r.cv}};
    if (r.algbw_GBps) {
      b["bytes_per_second"] = *r.algbw_GBps * 1e9;
      b["algbw_GBps"] = *r.algbw_GBps;
    }
    if (r.busbw_GBps) b["busbw_GBps"] = *r.busbw_GBps;
    if (r.wrong) b["wrong"] = *r.wrong;
    benchmarks_.push_back(std::move(b));
  }

  void finish() override {
    json doc = {{"context", context_}, {"benchmarks", benchmarks_}};
    out_ << doc.dump(2) << "\n" << std::flush;
  }

 private:
  std::ostream& out_;
  json context_ = json::object();
  json benchmarks_ = json::array();
  std::map<std::string, std::pair<std::size_t, int>> families_;
};

}  // namespace

std::unique_ptr<Writer> make_gbench_writer(std::ostream& out) {
  return std::make_unique<GbenchWriter>(out);
}

}  // namespace cb
