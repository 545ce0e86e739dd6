// What identifies a measurement across runs and launches: everything but the measured figures.
// compare matches records by it, repetitions are summarised by it, check and tune group by it.
#pragma once

#include <compare>
#include <cstdint>
#include <string>

#include "common/record.hpp"

namespace cb {

// What identifies a measurement across runs (everything but the measured figures).
struct RecordKey {
  std::string collective, backend, algorithm, dtype, op, placement;
  int root = -1;
  int nranks = 0;
  std::uint64_t bytes = 0;
  std::string env;    // `tune --env` combination, "" otherwise
  std::string split;  // alltoallv's split, "" otherwise
  auto operator<=>(const RecordKey&) const = default;
};

RecordKey key_of(const ResultRecord& r);
// "allreduce mpi/default float sum out 2 ranks 1 MiB" (root only where there is one).
std::string describe(const RecordKey& k);

}  // namespace cb
