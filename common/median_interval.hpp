// The distribution-free confidence interval of a median from the samples themselves: two order
// statistics whose ranks come from the binomial distribution (each sample lies below the median
// with probability 1/2), so no assumption about the samples' distribution is made.
#pragma once

#include <cstddef>

namespace cb {

// The confidence the runner records the interval of each case's median at (p50_low_us,
// p50_high_us).
inline constexpr double kMedianConfidence = 0.99;

// 1-based ranks [low, high] of the narrowest symmetric interval of order statistics that covers
// the median of `n` samples with probability >= `confidence`, and the coverage it has. Where n is
// too small to reach it (n < 8 at 0.99), the whole range: low = 1, high = n, coverage
// 1 - 2^(1-n). n = 0: all zero.
struct MedianRanks {
  std::size_t low = 0, high = 0;
  double coverage = 0;
};
MedianRanks median_interval_ranks(std::size_t n, double confidence = kMedianConfidence);

// The two-sided standard normal quantile: z with P(|Z| <= z) = coverage (0 < coverage < 1).
double normal_two_sided_z(double coverage);

}  // namespace cb
