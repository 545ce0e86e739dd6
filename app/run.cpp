#include "app/run.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "core/process_start.hpp"
#include "report/format/writer.hpp"

namespace cb {

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

int run(const RunRequest& rq) {
  return run_sweep(plan_run(rq), {});
}

int run_sweep(const RunPlan& plan, const ExtraWriter& extra, const PlanFingerprint& head) {
  if (plan.in_jobs()) return run_repeated(plan, extra);
  // Ranks under a launcher leave the marking to the commbench that started them, if any: a
  // rank cannot tell its own failure from the run's.
  if (detect_launch().kind != LaunchInfo::Kind::Single) return run_here(plan, extra, {}, head);
  const JsonlOutputs jsonl(plan.outputs);
  int code = 0;
  try {
    code = run_here(plan, extra, {}, head);
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
