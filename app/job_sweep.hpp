// The one loop behind `run --repeat N`, `run --launch 'PREFIX'` and `tune --env`: the request's
// sweep as fresh jobs (launch/job), grouped into units of progress (a repetition, an
// environment combination). Each job's diagnostics are printed once over the sweep, its
// document read back, its records tagged with their repetition and environment; the first meta
// is kept; kept records stream to the .jsonl outputs as each group ends, and the other outputs
// get the summaries (medians over repetitions) at the end.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "app/run_request.hpp"
#include "common/error.hpp"
#include "common/record.hpp"
#include "launch/job.hpp"
#include "launch/progress.hpp"
#include "launch/stop_signals.hpp"
#include "report/format/writer.hpp"

namespace cb {

// One unit of progress: `jobs` fresh jobs of the sweep's run, with `env` set on every rank.
struct JobGroup {
  EnvList env;
  std::string env_tag;   // each record's env ("" none)
  int jobs = 1;
  int first_repeat = 0;  // the first job's repetition index
  std::string label;     // what the progress line calls it
  // Each job runs its cases in its own shuffled order (a seed per job, recorded with its
  // control measurement), so that a slow stretch of the machine does not always hit the same
  // sizes.
  bool shuffled = false;
};

struct GroupOutcome {
  std::vector<ResultRecord> records;  // tagged; of the jobs that ended with a document, and the
                                      // cases a failed job finished
  std::optional<RunMeta> meta;        // the first job's
  std::vector<LaunchControl> launches;  // every job's control measurements, tagged like records
  int exit_code = 0;                  // the first failed job's (then the group stopped)
  std::string message;                // its verdict line
  int interrupted = 0;                // the signal that stopped commbench, else 0
  std::string rejected;               // why check_meta rejected a job's meta, else ""
};

class JobSweep {
 public:
  // `unit` names the groups for progress ("repetitions"); `repeats`: the repetitions of each
  // measurement (records are tagged with theirs when above 1).
  JobSweep(const RunPlan& plan, std::string unit, int repeats);
  void add_summary_writer(std::unique_ptr<Writer> w) { summaries_.push_back(std::move(w)); }
  bool streams() const { return !streams_.empty(); }

  // Runs group `index` (1-based) of `total`: its jobs in turn, until one fails (a validation
  // failure keeps that job's records), is interrupted, or its meta is rejected by `check_meta`
  // (which returns why, "" to accept).
  GroupOutcome run(const JobGroup& group, std::size_t index, std::size_t total,
                   const std::function<std::string(const std::optional<RunMeta>&)>& check_meta =
                       {});
  // Keeps records (streamed now, summarised at the end) and, first of all, a meta.
  void keep(const std::vector<ResultRecord>& records, const std::optional<RunMeta>& meta = {});
  // The sweep failed (`exit_code`, `reason`) after the records kept so far: the streams mark
  // what they wrote as incomplete (a stream that got no record leaves no file); the summaries
  // are not written, as a failed run writes none (unless finish() follows, as after an
  // interrupted tune --env, whose summaries hold what finished).
  void abandon(int exit_code, const std::string& reason);
  // Every group done (`completed`: not interrupted): the streams end, and the summaries get the
  // first kept meta (adjusted by `adjust`) and the kept records, summarised over repetitions.
  // Returns what the summaries got.
  std::vector<ResultRecord> finish(bool completed, const std::function<void(RunMeta&)>& adjust);

 private:
  // Caught over the whole sweep, so that a stop between two jobs (while one's records are
  // written) ends the sweep as an interruption, cleaned up, not by the signal's default action.
  StopSignals stop_;
  JobSpec spec_;
  int repeats_;
  bool started_ = false;
  std::vector<std::unique_ptr<Writer>> streams_, summaries_;
  bool abandoned_ = false;
  Progress progress_;
  std::set<std::string> said_;
  std::vector<ResultRecord> kept_;
  std::optional<RunMeta> meta_;
  int jobs_run_ = 0;  // jobs whose documents were read
};

// The error kind of a job's exit code.
ErrorKind kind_of_exit(int code);

// A job's notes and warnings, and when it succeeded its other stderr lines, each printed on
// stderr once over a sweep of jobs (`said` holds the lines printed so far).
void print_diagnostics(const JobOutcome& job, std::set<std::string>& said);

}  // namespace cb
