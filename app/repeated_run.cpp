// `run --repeat N` and `run --launch 'PREFIX'`: the sweep as N fresh jobs, each repetition's
// records streamed to .jsonl outputs as it ends, and one summary per measurement (medians over
// repetitions, every repetition kept) in the other outputs. A failed repetition ends the sweep
// with its exit code: the .jsonl outputs keep every finished case and are marked incomplete.
#include <fmt/format.h>

#include "app/job_sweep.hpp"
#include "app/run.hpp"
#include "common/error.hpp"

namespace cb {

int run_repeated(const RunPlan& plan, const ExtraWriter& extra) {
  const int n = plan.repeat;
  JobSweep sweep(plan, "repetitions", n);
  if (extra) sweep.add_summary_writer(extra());
  std::string failure;
  std::vector<LaunchControl> launches;
  for (int r = 0; r < n; ++r) {
    const std::string place = fmt::format("repetition {} of {}", r + 1, n);
    // Repetitions run their cases in shuffled orders (run.md); a single --launch in plan order,
    // as a plain run does, so that its .jsonl streams each case as it ends.
    GroupOutcome job = sweep.run({{}, {}, 1, r, place, n > 1}, r + 1, n);
    sweep.keep(job.records, job.meta);
    if (job.exit_code != 0 && job.exit_code != 3) {
      // The cases finished so far stay in the .jsonl outputs, marked as not the whole run.
      const std::string why = fmt::format("{}: {}", place, job.message);
      sweep.abandon(job.exit_code, why);
      fail(kind_of_exit(job.exit_code), "{}", why);
    }
    launches.insert(launches.end(), job.launches.begin(), job.launches.end());
    if (job.exit_code == 3 && failure.empty()) failure = fmt::format("{}: {}", place, job.message);
  }
  sweep.finish(true, [&](RunMeta& meta) { meta.launches = launches; });
  if (!failure.empty()) fail(ErrorKind::Validation, "{}", failure);
  return 0;
}

}  // namespace cb
