// Each rank's time for a case, and where each rank runs: gathered by the runner for every
// backend, so that a rank slower than the others (a straggling GPU or core) is visible beside
// time_us, which is the slowest rank's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collectives/backend.hpp"
#include "common/record.hpp"

namespace cb {

// Where one process's ranks run.
struct RankPlace {
  int rank = 0;  // the first rank the process drives
  std::string host;
  std::optional<int> gpu;   // its local GPU index, where it drives exactly one
  std::optional<int> core;  // the CPU core it is bound to, where its affinity holds exactly one
};

// This process's place, for `backend`.
RankPlace this_place(const Backend& backend);
// The places of every process, in control-channel order (every process calls this together).
std::vector<RankPlace> gather_places(const RankPlace& mine, Control& control);

// Every process's `mine`, exactly (each value round-trips), in control-channel order.
std::vector<double> gather_times(double mine, Control& control);

// The statistics over `times_us` (one per process, in the order of `places`).
RankTimes rank_times(const std::vector<double>& times_us, const std::vector<RankPlace>& places);

}  // namespace cb
