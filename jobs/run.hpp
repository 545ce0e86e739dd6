// `run` and `tune` as work: a request is checked before anything runs, then its sweep runs once
// here (collectives/engine: the ranks started, or this rank's part), or, with --repeat or
// --launch, as fresh jobs (jobs/job_sweep).
#pragma once

#include <functional>
#include <memory>

#include "collectives/engine/rank_run.hpp"
#include "collectives/engine/run_request.hpp"
#include "common/record_writer.hpp"

namespace cb {

// An extra writer on rank 0, or over a sweep's summaries (tune adds its analysis this way).
using ExtraWriter = std::function<std::unique_ptr<Writer>()>;

// What a run in this process takes from this layer for its meta: the build's version and
// commit, this host's hardware facts (with --roof-* inputs) and their summary over hosts.
RunHooks run_meta_hooks(const RunRequest& rq);
// Checks every value of a request (the sweep, the outputs, --format, --repeat) before any work.
void check_run_request(const RunRequest& rq);
// `run`: the request's sweep, with `extra` beside the outputs. Returns the exit code.
int run(const RunRequest& rq, const ExtraWriter& extra = {});
// `run --repeat N` / `--launch`: the sweep as N fresh jobs, records tagged with their
// repetition, summaries (medians over repetitions) written at the end.
int run_repeated(const RunRequest& rq, const ExtraWriter& extra);

}  // namespace cb
