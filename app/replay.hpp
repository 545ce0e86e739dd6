// `replay` as work: the command line checked and turned into a plan before anything runs (run's
// rows that replay takes planned as `run` plans them, the model read or built, its buckets or
// units, the compute model, the outputs), then run once here (the ranks started as `run` starts
// them, each running app/replay_rank, rank 0 writing the report), or over --rounds fresh
// launches whose documents are read back, summarised per setting and judged
// (report/replay/replay_verdict).
#pragma once

#include <string>

#include "app/flags.hpp"
#include "app/replay_rank.hpp"
#include "app/run_request.hpp"

namespace cb {

struct ReplayRequest {
  RunRequest run;               // the launch, backends, steps, validation and outputs
  std::string model;            // --model FILE.csv
  std::string preset;           // --preset NAME
  std::string pattern = "ddp";  // --pattern ddp|fsdp
  std::string bucket_cap_mb;    // --bucket-cap-mb LIST (default 25)
  std::string first_bucket_mb;  // --first-bucket-mb MB (default 1)
  std::string backward_rate;    // --backward-us-per-mparam US
  std::string backward_ms;      // --backward-ms MS
  std::string forward_ratio;    // --forward-ratio R (fsdp, default 0.5)
  std::string param_dtype;      // --param-dtype NAME: every parameter cast to it
  std::string rounds;           // --rounds N: launches (default 5 with several caps, else 1)
  std::string min_gain = "2";   // --min-gain PCT
  bool dry_run = false;         // --dry-run: print the settings' collectives, run nothing
};

// replay's own flags.
const Flags<ReplayRequest>& replay_flags();
// The rows of run_flags() that replay takes (the launch, backends and their own flags, steps,
// validation, outputs), with replay's help where it differs; they fill ReplayRequest::run.
const Flags<RunRequest, RunPlan>& replay_run_flags();

// `replay`: plans `rq` (a usage Error naming the first bad value, before anything runs), then
// runs it. Returns the exit code.
int replay(const ReplayRequest& rq);

}  // namespace cb
