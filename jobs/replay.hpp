// `replay` as work: the request checked and turned into a plan before anything runs (the model
// read or built, its buckets or units, the compute model, the outputs), then run once here (the
// ranks started as `run` starts them, each running collectives/engine/replay_rank, rank 0
// writing the report), or over --rounds fresh launches whose documents are read back, summarised
// per setting and judged (report/replay_verdict).
#pragma once

#include <string>

#include "collectives/engine/replay_rank.hpp"
#include "collectives/engine/run_request.hpp"

namespace cb {

struct ReplayRequest {
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

// Whether replay takes run's flag `f` (the launch, backends, steps, validation, outputs).
bool replay_takes_run_flag(const RunFlag& f);

// The request as a plan; a usage Error naming the first bad value, before anything runs.
ReplayPlan replay_plan(const RunRequest& rq, const ReplayRequest& pq);

// `replay`: returns the exit code.
int replay(const RunRequest& rq, const ReplayRequest& pq);

}  // namespace cb
