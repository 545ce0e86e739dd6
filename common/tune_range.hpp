// One piece of tuning advice: for a backend, collective and size range, the algorithm to use.
#pragma once

#include <cstdint>
#include <string>

namespace cb {

struct TuneRange {
  std::string backend, library, collective, dtype, op, placement;
  int root = -1;
  int nranks = 0;
  int nnodes = 0;
  std::uint64_t min_bytes = 0;  // first measured size in the range
  std::uint64_t max_bytes = 0;  // last measured size in the range
  std::string algorithm;        // recommended: "default" or a forced algorithm's name
  double speedup = 1.0;         // geometric mean over the range of default time / chosen time
  int sizes = 0;                // measured sizes in the range
  // The noise margin: the gain over default the fastest forced algorithm had to exceed to be
  // chosen (the larger of the minimum gain and 3 combined standard errors), as a fraction of
  // default's time; the largest over the range.
  double margin = 0;
  std::string split;  // alltoallv: the split measured ("" for the other collectives)
};

}  // namespace cb
