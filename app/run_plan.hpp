// The run's plan: `run`'s command line (tune's run too) checked and typed once, before anything
// runs. The in-process run (rank_run), the job sweep and a fresh job's command line take it; no
// flag value is read again after plan_run.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "app/run_request.hpp"
#include "collectives/backend.hpp"
#include "collectives/engine/plan.hpp"
#include "collectives/engine/runner.hpp"
#include "probes/roof_facts.hpp"

namespace cb {

struct RunPlan {
  // What is measured.
  SweepOptions sweep;
  RunnerOptions runner;
  MemoryKind memory = MemoryKind::Host;
  bool memory_given = false;     // --memory
  bool max_bytes_given = false;  // -e
  double timeout = 300;          // --timeout, seconds: the watchdog's, each job's start-up bound's
  int gpus = 1;                  // --gpus
  std::optional<int> nranks;     // -N
  // -B as given, duplicates dropped; empty: the default, chosen where the ranks run.
  std::vector<std::string> backends;
  std::map<std::string, std::string> backend_flags;  // each backend's own, by long name
  RoofInputs roof;                                   // --roof-link-gbps, --roof-host-memory
  // Where the records go.
  std::string format = "table";  // --format (stdout)
  std::vector<std::string> outputs;
  bool results_to_stdout = true;  // false where the caller prints its own view (tune's table)
  std::string progress = "auto";  // auto, always or never
  // How it runs: here, or as fresh jobs.
  int repeat = 1;                          // --repeat
  std::vector<std::string> launch;         // --launch in words; empty: none
  std::vector<std::string> job_arguments;  // a fresh job's command line (run_arguments)
  bool in_jobs() const { return repeat > 1 || !launch.empty(); }
};

// Checks every value of `rq` and types it; a usage Error naming the first bad one. Fresh jobs
// (--repeat, --launch, and `jobs_for`, the option of a caller that runs the sweep as jobs:
// tune's "--env") are refused under mpirun/srun, and --launch's launcher is checked.
RunPlan plan_run(const RunRequest& rq, const char* jobs_for = nullptr);

// -N, else one rank per GPU this process sees (per --gpus GPUs), at least one.
int wanted_ranks(const RunPlan& plan);

}  // namespace cb
