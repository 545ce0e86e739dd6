// `run`'s command line, as typed (RunRequest) and as planned (RunPlan): checked and typed once,
// before anything runs, by one table of flags (run_flags). Each flag is one row there: its names
// and help, the request field it fills, how the value becomes part of the plan, and whether a
// fresh job of a sweep (--repeat, --launch, tune --env) is given it again, so that no flag can be
// dropped from a relaunch by being forgotten in a second list. The in-process run (rank_run), the
// job sweep and a fresh job's command line take the plan; no flag value is read again.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "app/flags.hpp"
#include "collectives/backend.hpp"
#include "collectives/engine/plan.hpp"
#include "collectives/engine/runner.hpp"
#include "probes/roof_facts.hpp"

namespace cb {

// Option values as typed on the command line.
struct RunRequest {
  std::string collectives = "all";
  std::string backends;
  std::string algorithms = "default";
  std::string min_bytes = "8";
  std::string max_bytes;
  std::string step_factor = "2";
  std::string step_bytes;
  std::string dtypes = "float";
  std::string ops = "sum";
  std::string placement = "out";
  std::string root = "0";
  std::string warmup;
  std::string iters;
  std::string min_time = "0.05";
  bool check = true;
  std::string memory;
  std::string nranks;
  std::string timeout = "300";
  std::string format = "table";
  std::vector<std::string> outputs;
  std::string progress = "auto";
  std::map<std::string, std::string> backend_flags;  // each backend's own, by long name
  std::vector<std::string> own_options;  // backends' own options given (flags, tune's --emit-*)
  std::string gpus;
  std::string repeat = "1";  // --repeat N: the sweep N times, each a separate launch
  std::string launch;        // --launch 'PREFIX': the user's launcher for each launch
  std::vector<std::string> splits;  // --split, repeatable: alltoallv's distributions
  std::string split_seed;           // --split-seed (default 1)
  std::string moe_hidden;           // --moe-hidden (default 7168)
  std::string roof_link_gbps;    // --roof-link-gbps: network rate the probe cannot read
  std::string roof_host_memory;  // --roof-host-memory: GB/s, or "measure" in this launch
};

// What the values mean, checked.
struct RunPlan {
  // What is measured.
  SweepOptions sweep;
  RunnerOptions runner;
  MemoryKind memory = MemoryKind::Host;
  bool memory_given = false;     // --memory
  bool max_bytes_given = false;  // -e
  double timeout = 300;          // --timeout, seconds: the watchdog's, a job's start-up bound's
  int gpus = 1;                  // --gpus
  std::optional<int> nranks;     // -N
  // -B as given, duplicates dropped; empty: the default, chosen where the ranks run.
  std::vector<std::string> backends;
  std::map<std::string, std::string> backend_flags;  // each backend's own, by long name
  std::vector<std::string> own_options;  // backends' own options given (flags, tune's --emit-*)
  RoofInputs roof;                                   // --roof-link-gbps, --roof-host-memory
  // Where the records go.
  std::string format = "table";  // --format (stdout)
  std::vector<std::string> outputs;
  bool results_to_stdout = true;  // false where the caller prints its own view (tune's table)
  std::string progress = "auto";  // auto, always or never
  // How it runs: here, or as fresh jobs.
  int repeat = 1;                          // --repeat
  std::string launch_prefix;               // --launch as given
  std::vector<std::string> launch;         // --launch in words; empty: none
  std::vector<std::string> job_arguments;  // a fresh job's command line (run_arguments)
  bool in_jobs() const { return repeat > 1 || !launch.empty(); }
};

// Every `run` flag (backends' own flags from the registry included), in --help order. Output,
// progress and repetition flags belong to the sweep itself: a fresh job is not given them again.
const Flags<RunRequest, RunPlan>& run_flags();

// Reads every row of run_flags() into the plan, then what depends on several flags: -e's
// default, the sizes, the backends' own flags together, distinct outputs, -B's choices, and
// fresh jobs (--repeat, --launch, and `jobs_for`, the option of a caller that runs the sweep as
// jobs: tune's "--env"), refused under mpirun/srun, with --launch's launcher checked. A usage
// Error names the first bad value.
RunPlan plan_run(const RunRequest& rq, const char* jobs_for = nullptr);

// The `run` command line that performs `rq`'s sweep once (for a fresh job): every relaunched
// flag of run_flags() with its value.
std::vector<std::string> run_arguments(const RunRequest& rq);
// The same for the rows `keep` accepts, without the subcommand (another subcommand that takes
// some of run's flags: replay).
std::vector<std::string> run_flag_arguments(
    const RunRequest& rq, const std::function<bool(const Flag<RunRequest, RunPlan>&)>& keep);

// -N, else one rank per GPU this process sees (per --gpus GPUs), at least one.
int wanted_ranks(const RunPlan& plan);

}  // namespace cb
