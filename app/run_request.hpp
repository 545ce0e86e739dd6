// `run`'s flags as typed on the command line. Each flag is declared once, as a row of
// run_flags(): the command line registers it from there, and the command line a fresh job of a
// sweep gets (--repeat, --launch, tune --env) is built from there, so no flag can be dropped from
// a relaunch by being forgotten in a second list. What the values mean, checked, is the run's
// plan (run_plan.hpp).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "app/flags.hpp"

namespace cb {

// Option values as typed; plan_run checks them before any work starts.
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
};

// Every `run` flag (backends' own flags from the registry included), in --help order. Output,
// progress and repetition flags belong to the sweep itself: a fresh job is not given them again.
const Flags<RunRequest>& run_flags();

// The `run` command line that performs `rq`'s sweep once (for a fresh job): every relaunched
// flag of run_flags() with its value.
std::vector<std::string> run_arguments(const RunRequest& rq);

}  // namespace cb
