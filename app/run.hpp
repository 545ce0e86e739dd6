// `run` as work: the command line becomes the run's plan once (run_request.hpp), then the sweep
// runs once here (rank_run: the ranks started, or this rank's part), or, with --repeat or --launch,
// as fresh jobs (job_sweep).
#pragma once

#include "app/rank_run.hpp"
#include "app/run_request.hpp"

namespace cb {

// `run`: plans `rq`, then runs it. Returns the exit code.
int run(const RunRequest& rq);
// A planned run, with `extra` beside the outputs (tune adds its analysis this way); `head` names
// the subcommand for env:// ranks (rank_run.hpp).
int run_sweep(const RunPlan& plan, const ExtraWriter& extra,
              const PlanFingerprint& head = command_fingerprint("run"));
// `run --repeat N` / `--launch`: the sweep as N fresh jobs, records tagged with their
// repetition, summaries (medians over repetitions) written at the end.
int run_repeated(const RunPlan& plan, const ExtraWriter& extra);

}  // namespace cb
