// `run`'s options and execution, shared with `tune` (a run with extra analysis at the end).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "collectives/launch/job.hpp"
#include "report/writer.hpp"

namespace cb {

// Option values as typed; validated by execute_run before any work starts.
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
  std::string gpus;
  std::string repeat = "1";  // --repeat N: the sweep N times, each a separate launch
  std::string launch;        // --launch 'PREFIX': the user's launcher for each launch
  std::string roof_link_gbps;    // --roof-link-gbps: network rate the probe cannot read
  std::string roof_host_memory;  // --roof-host-memory: GB/s, or "measure" in this launch
  // An extra writer on rank 0 (tune adds its analysis this way).
  std::function<std::unique_ptr<Writer>()> extra_writer;
};

void add_run_options(CLI::App* cmd, RunRequest& rq);
int execute_run(const RunRequest& rq);

// Checks every option value of a request as execute_run does, before any work starts.
void check_run_request(const RunRequest& rq);
// --repeat's value (>= 1); a usage Error otherwise.
int repeat_count(const RunRequest& rq);
// The `run` command line that performs `rq`'s sweep once (for a fresh job), without its
// outputs, format, progress, repetitions and launcher.
std::vector<std::string> run_arguments(const RunRequest& rq);
// The fresh job that performs `rq`'s sweep once, under rq.launch when given.
JobSpec job_spec(const RunRequest& rq);
// The writers of a sweep of jobs: .jsonl outputs stream each job's records as it ends; stdout
// (in rq.format) and the other outputs get what the sweep writes at its end.
struct JobWriters {
  std::vector<std::unique_ptr<Writer>> streams, summaries;
};
JobWriters job_writers(const RunRequest& rq);
// `run --repeat N` / `--launch`: the sweep as N fresh jobs, records tagged with their
// repetition, summaries (medians over repetitions) written at the end.
int execute_repeated(const RunRequest& rq);

// Refuses fresh jobs under mpirun/srun (exit 2) and checks rq.launch's launcher; `what` names
// the option that asked for them.
void check_job_launch(const RunRequest& rq, const char* what);
// A job's notes and warnings, and when it succeeded its other stderr lines, each printed once
// over a sweep of jobs.
void print_diagnostics(const JobOutcome& job, std::set<std::string>& said);

}  // namespace cb
