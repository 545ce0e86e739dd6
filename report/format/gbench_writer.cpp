// Google Benchmark's JSON format (`--benchmark_format=json`), so tools that track Google
// Benchmark results (github-action-benchmark, bencher, compare.py) can track commbench. Each
// record is one benchmark named collective/backend/algorithm/dtype/op/placement[/root:N]/bytes;
// real_time is the mean time per operation in microseconds and the other figures are counters.
#include <map>
#include <numeric>
#include <ostream>
#include <thread>

#include "report/format/writers.hpp"
#include "report/launch_statistics.hpp"

namespace cb {

namespace {

using json = nlohmann::ordered_json;  // keys in Google Benchmark's order

std::string family_name(const ResultRecord& r) {
  std::string name = r.collective + "/" + r.backend + "/" + r.algorithm + "/" + r.dtype + "/" +
                     r.op + "/" + r.placement;
  if (r.root >= 0) name += "/root:" + std::to_string(r.root);
  if (!r.split.empty()) name += "/split:" + r.split;
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
    const std::size_t family_index = it->second.first;
    const int instance = it->second.second++;
    const std::string name = family + "/" + std::to_string(r.bytes);
    if (r.repeats.empty()) {
      benchmarks_.push_back(iteration(r, name, family_index, instance, 1, 0));
      return;
    }
    // As Google Benchmark does with --benchmark_repetitions: one iteration row per repetition,
    // then aggregate rows (mean, median, stddev) over them.
    const int n = static_cast<int>(r.repeats.size());
    for (const auto& x : r.repeats) {
      benchmarks_.push_back(iteration(x, name, family_index, instance, n, x.repeat.value_or(0)));
    }
    for (const char* aggregate : {"mean", "median", "stddev"}) {
      benchmarks_.push_back(aggregate_row(r, name, family_index, instance, aggregate));
    }
  }

  void finish() override {
    json doc = {{"context", context_}, {"benchmarks", benchmarks_}};
    out_ << doc.dump(2) << "\n" << std::flush;
  }

 private:
  static json iteration(const ResultRecord& r, const std::string& name, std::size_t family_index,
                        int instance, int repetitions, int repetition_index) {
    // No CPU time is measured: cpu_time repeats real_time so readers that need it find it.
    json b = {{"name", name},
              {"family_index", family_index},
              {"per_family_instance_index", instance},
              {"run_name", name},
              {"run_type", "iteration"},
              {"repetitions", repetitions},
              {"repetition_index", repetition_index},
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
    return b;
  }

  static json aggregate_row(const ResultRecord& r, const std::string& name,
                            std::size_t family_index, int instance, const std::string& aggregate) {
    auto over = [&](auto figure) {
      std::vector<double> v;
      for (const auto& x : r.repeats) {
        if (auto f = figure(x)) v.push_back(*f);
      }
      if (aggregate == "median") return median_of(v);
      if (aggregate == "stddev") return stddev_of(v);
      return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / v.size();
    };
    auto time = [](const ResultRecord& x) { return std::optional<double>(x.time_us); };
    const double t = over(time);
    json b = {{"name", name + "_" + aggregate},
              {"family_index", family_index},
              {"per_family_instance_index", instance},
              {"run_name", name},
              {"run_type", "aggregate"},
              {"repetitions", r.repeats.size()},
              {"threads", 1},
              {"aggregate_name", aggregate},
              {"aggregate_unit", "time"},
              {"iterations", r.repeats.size()},
              {"real_time", t},
              {"cpu_time", t},
              {"time_unit", "us"},
              {"label", r.library}};
    b["p50_us"] = over([](const ResultRecord& x) { return std::optional<double>(x.p50_us); });
    b["p99_us"] = over([](const ResultRecord& x) { return std::optional<double>(x.p99_us); });
    if (r.algbw_GBps) {
      double algbw = over([](const ResultRecord& x) { return x.algbw_GBps; });
      b["bytes_per_second"] = algbw * 1e9;
      b["algbw_GBps"] = algbw;
    }
    if (r.busbw_GBps) b["busbw_GBps"] = over([](const ResultRecord& x) { return x.busbw_GBps; });
    return b;
  }

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
