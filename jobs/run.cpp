#include "jobs/run.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "collectives/engine/rank_run.hpp"
#include "collectives/launch/process_start.hpp"
#include "common/error.hpp"
#include "common/file_identity.hpp"
#include "common/version_info.hpp"
#include "probes/roof_facts.hpp"
#include "probes/topology.hpp"
#include "report/writer.hpp"

namespace cb {

void check_run_request(const RunRequest& rq) {
  RunSettings s = run_settings(rq);
  // Here, before any rank starts; ranks take rank 0's copy (share_split_matrices).
  if (detect_launch().kind == LaunchInfo::Kind::Single) {
    for (auto& split : s.sweep.split.splits) load_matrix(split);
  }
  parse_roof_inputs(rq.roof_link_gbps, rq.roof_host_memory);
  for (const auto& path : rq.outputs) check_output_path(path);
  std::vector<NamedFile> inputs;
  for (const auto& split : s.sweep.split.splits)
    if (split.kind == SplitKind::Matrix) inputs.push_back({"--split", split.path});
  check_distinct_outputs(rq.outputs, inputs);
  std::ostringstream probe_format;
  make_stream_writer(rq.format, probe_format);  // validates --format before any work
  repeat_count(rq);
}

namespace {

// The .jsonl outputs as they were before the run, so that after a failure only those the run
// wrote are marked incomplete (not an older file it never reached).
class JsonlOutputs {
 public:
  explicit JsonlOutputs(const std::vector<std::string>& outputs) {
    for (const auto& path : outputs) {
      if (is_streamed_output(path)) before_.emplace_back(path, state(path));
    }
  }
  // After a failure: marks each .jsonl that the run created or changed.
  void mark_incomplete(int exit_code, const std::string& reason) const {
    for (const auto& [path, was] : before_) {
      if (auto now = state(path); now && now != was) mark_jsonl_incomplete(path, exit_code, reason);
    }
  }

 private:
  using State = std::optional<std::tuple<dev_t, ino_t, off_t, std::int64_t, long>>;
  static State state(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return std::nullopt;
    return std::make_tuple(st.st_dev, st.st_ino, st.st_size,
                           static_cast<std::int64_t>(st.st_mtim.tv_sec), st.st_mtim.tv_nsec);
  }
  std::vector<std::pair<std::string, State>> before_;
};

}  // namespace

RunHooks run_meta_hooks(const RunRequest& rq) {
  RunHooks hooks;
  hooks.version = commbench_version();
  hooks.git_commit = commbench_git_commit();
  hooks.topology_facts = [&rq] {
    return host_topology_facts("/sys", parse_roof_inputs(rq.roof_link_gbps, rq.roof_host_memory))
        .dump();
  };
  hooks.summarise_topology = topology_summary;
  return hooks;
}

int run(const RunRequest& rq, const ExtraWriter& extra) {
  if (repeat_count(rq) > 1 || !rq.launch.empty()) return run_repeated(rq, extra);
  check_run_request(rq);
  RunHooks hooks = run_meta_hooks(rq);
  hooks.rank0_writers = [&rq, &extra] {
    std::vector<std::unique_ptr<Writer>> writers;
    if (rq.results_to_stdout) writers.push_back(make_stdout_writer(rq.format));
    for (const auto& path : rq.outputs) writers.push_back(make_file_writer(path));
    if (extra) writers.push_back(extra());
    return writers;
  };
  // Ranks under a launcher leave the marking to the commbench that started them, if any: a
  // rank cannot tell its own failure from the run's.
  if (detect_launch().kind != LaunchInfo::Kind::Single) return run_request(rq, hooks);
  const JsonlOutputs jsonl(rq.outputs);
  int code = 0;
  try {
    code = run_request(rq, hooks);
  } catch (const Error& e) {
    jsonl.mark_incomplete(exit_code(e.kind()), e.what());
    throw;
  }
  // A validation failure (3) measured every case; any other failure lost some.
  if (code != 0 && code != 3) {
    jsonl.mark_incomplete(code, fmt::format("the run failed with exit {}", code));
  }
  return code;
}

}  // namespace cb
