// One run of a plan's sweep in this process: without a launcher it chooses the backends, starts
// the ranks (locally, or under the MPI launcher) and reports their outcome; in a rank it runs the
// sweep from the watchdog on: control channel, backends, plans, the host memory check, meta,
// rank 0's writers, progress and the session.
#pragma once

#include <functional>
#include <memory>

#include "app/run_request.hpp"
#include "common/record_writer.hpp"

namespace cb {

// An extra writer on rank 0, or over a sweep's summaries (tune adds its analysis this way).
using ExtraWriter = std::function<std::unique_ptr<Writer>()>;

// Runs `plan` once: starts its ranks when nothing else did, else runs this rank's part, with
// rank 0 writing the plan's outputs and `extra`. Returns the exit code; throws an Error with its
// kind.
int run_here(const RunPlan& plan, const ExtraWriter& extra);

}  // namespace cb
