// One run of a request's sweep in this process: without a launcher it starts the ranks (locally,
// or under the MPI launcher) and reports their outcome; in a rank it runs the sweep from the
// watchdog on: control channel, backends, plans, the host memory check, meta, rank 0's writers,
// progress and the session.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "app/run_request.hpp"
#include "common/record_writer.hpp"

namespace cb {

// What the run takes from the layers above the engine: rank 0's writers (made once, before the
// first case) and this build's and host's facts for meta.
struct RunHooks {
  std::function<std::vector<std::unique_ptr<Writer>>()> rank0_writers;
  std::string version;
  std::string git_commit;
  std::function<std::string()> topology_facts;  // this host's hardware facts (JSON text)
  // Turns every rank's facts into the run's topology summary.
  std::function<nlohmann::json(const std::vector<std::string>&)> summarise_topology;
};

// Runs `rq` (whose values have been checked) once: starts its ranks when nothing else did,
// else runs this rank's part. Returns the exit code; throws an Error with its kind.
int run_request(const RunRequest& rq, const RunHooks& hooks);

}  // namespace cb
