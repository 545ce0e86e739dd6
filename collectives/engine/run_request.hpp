// `run`'s flags as typed, and what they mean once checked. Each flag is declared once, as a row
// of run_flags(): the command line registers it from there, and the argument list a fresh job of
// a sweep gets (--repeat, --launch, tune --env) is built from there, so no flag can be dropped
// from a relaunch by being forgotten in a second list.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "collectives/backends/backend.hpp"
#include "collectives/engine/plan.hpp"
#include "collectives/engine/runner.hpp"

namespace cb {

// Option values as typed; checked by check_run_request before any work starts.
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
  std::vector<std::string> splits;  // --split, repeatable: alltoallv's distributions
  std::string split_seed;           // --split-seed (default 1)
  std::string moe_hidden;           // --moe-hidden (default 7168)
  std::string roof_link_gbps;    // --roof-link-gbps: network rate the probe cannot read
  std::string roof_host_memory;  // --roof-host-memory: GB/s, or "measure" in this launch
  // Not a flag: false where the caller prints its own view of the records on stdout (tune's
  // table), so that the run's --format writer does not.
  bool results_to_stdout = true;
};

// One `run` flag: its names and help for the command line, the request field it fills (exactly
// one of text, toggle, list) and whether a fresh job of a sweep is given it again. Output,
// progress and repetition flags belong to the sweep itself, not to its jobs.
struct RunFlag {
  std::string names;  // as CLI11 takes them: "-c,--collectives", "--check,!--no-check"
  std::string help;
  std::function<std::string&(RunRequest&)> text;  // a flag with one value
  bool RunRequest::*toggle = nullptr;             // an on/off flag: --NAME, --no-NAME
  std::vector<std::string> RunRequest::*list = nullptr;  // a repeatable flag
  bool relaunched = true;

  std::string long_name() const;  // "--collectives", "--check"
};

// Every `run` flag (backends' own flags from the registry included), in --help order.
const std::vector<RunFlag>& run_flags();

// The checked meaning of a request's sweep and timing flags.
struct RunSettings {
  SweepOptions sweep;
  RunnerOptions runner;
  MemoryKind memory = MemoryKind::Host;
  double timeout = 300;
  int gpus = 1;
};

// Checks every flag value that decides what runs; a usage Error naming the first bad one.
RunSettings run_settings(const RunRequest& rq);
// --repeat's value (>= 1); a usage Error otherwise.
int repeat_count(const RunRequest& rq);
// -N's value, else its default: one rank per GPU (per --gpus GPUs), at least one.
int wanted_ranks(const RunRequest& rq, const RunSettings& s);
// The `run` command line that performs `rq`'s sweep once (for a fresh job): every relaunched
// flag of run_flags() with its value.
std::vector<std::string> run_arguments(const RunRequest& rq);
// The same for the rows `keep` accepts, without the subcommand (another subcommand that takes
// some of run's flags: replay).
std::vector<std::string> run_flag_arguments(const RunRequest& rq,
                                            const std::function<bool(const RunFlag&)>& keep);

}  // namespace cb
