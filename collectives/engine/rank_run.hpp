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

#include "collectives/engine/run_meta.hpp"
#include "collectives/engine/run_request.hpp"
#include "common/record_writer.hpp"

namespace cb {

class Watchdog;

// What a rank's work has once its watchdog, control channel and backends are up.
struct RankContext {
  const RunRequest& request;
  const RunSettings& settings;
  Control& control;
  Watchdog& watchdog;
  std::vector<std::unique_ptr<Backend>>& backends;
  // The run's meta for these hosts (collective: every rank calls it at the same point).
  std::function<RunMeta(const RunHosts&)> meta;
  // Objects that must outlive an error until this rank has recorded how it failed (its
  // communicators: their peers then fail after it, naming it).
  std::vector<std::shared_ptr<void>>& keep;
};

// What the run takes from the layers above the engine: rank 0's writers (made once, before the
// first case) and this build's and host's facts for meta.
struct RunHooks {
  std::function<std::vector<std::unique_ptr<Writer>>()> rank0_writers;
  std::string version;
  std::string git_commit;
  std::function<std::string()> topology_facts;  // this host's hardware facts (JSON text)
  // Turns every rank's facts into the run's topology summary.
  std::function<nlohmann::json(const std::vector<std::string>&)> summarise_topology;
  // A rank's work other than run's sweep (replay's steps); empty: the sweep and its session.
  std::function<void(RankContext&)> rank_work;
};

// Runs `rq` (whose values have been checked) once: starts its ranks when nothing else did,
// else runs this rank's part. Returns the exit code; throws an Error with its kind.
int run_request(const RunRequest& rq, const RunHooks& hooks);

}  // namespace cb
