// Turning an algorithm sweep into advice: for every collective and size, which algorithm to use,
// merged into size ranges, kept at "default" unless another algorithm is faster by more than the
// measurements' own uncertainty.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/record.hpp"
#include "common/tune_range.hpp"

namespace cb {

struct TuneOptions {
  double min_gain = 0.02;   // a forced algorithm must beat default by at least this fraction...
  double noise_sigmas = 3;  // ...and by this many combined standard errors of the two means
};

// Records of one sweep (several algorithms per case). Records with wrong > 0 are never chosen.
std::vector<TuneRange> recommend(const std::vector<ResultRecord>& records,
                                 const TuneOptions& options = {});

// Whether `algorithm` names the library's own choice ("default", "default (RING/SIMPLE, 32 ch)").
bool is_default_algorithm(const std::string& algorithm);

}  // namespace cb
