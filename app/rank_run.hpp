// One run of a plan in this process: without a launcher it chooses the backends, starts the
// ranks (locally, or under the MPI launcher) and reports their outcome; in a rank it runs from
// the watchdog on: control channel, backends, then the sweep (plans, the host memory check, meta,
// rank 0's writers, progress and the session) or the caller's own work (replay's steps).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "app/run_fingerprint.hpp"
#include "app/run_request.hpp"
#include "collectives/engine/run_meta.hpp"
#include "common/record_writer.hpp"

namespace cb {

class Watchdog;

// An extra writer on rank 0, or over a sweep's summaries (tune adds its analysis this way).
using ExtraWriter = std::function<std::unique_ptr<Writer>()>;

// What a rank's work has once its watchdog, control channel and backends are up.
struct RankContext {
  const RunPlan& plan;
  Control& control;
  Watchdog& watchdog;
  std::vector<std::unique_ptr<Backend>>& backends;
  // The run's meta for these hosts (collective: every rank calls it at the same point).
  std::function<RunMeta(const RunHosts&)> meta;
  // Objects that must outlive an error until this rank has recorded how it failed (its
  // communicators: their peers then fail after it, naming it).
  std::vector<std::shared_ptr<void>>& keep;
};

// A rank's work other than the run's sweep (replay's steps).
using RankWork = std::function<void(RankContext&)>;

// Runs `plan` once: starts its ranks when nothing else did, else runs this rank's part: `work`
// where given, else the sweep, with rank 0 writing the plan's outputs and `extra`. Under env://
// every rank must run the same plan: `head` (the subcommand and its own options) and the run's
// (run_fingerprint). Returns the exit code; throws an Error with its kind.
int run_here(const RunPlan& plan, const ExtraWriter& extra, const RankWork& work = {},
             const PlanFingerprint& head = command_fingerprint("run"));

}  // namespace cb
