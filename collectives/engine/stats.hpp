// Summary statistics of per-iteration samples.
#pragma once

#include <vector>

namespace cb {

struct SampleStats {
  double mean = 0, min = 0, p50 = 0, p99 = 0, max = 0;
  double stdev = 0;  // sample standard deviation (n - 1)
  double cv = 0;     // stdev / mean
  // The distribution-free confidence interval of the median at kMedianConfidence (order
  // statistics, common/median_interval.hpp): min and max where there are too few samples for it.
  double p50_low = 0, p50_high = 0;
};

// Percentiles are nearest-rank: the smallest sample with at least p% of samples at or below it.
SampleStats summarize(std::vector<double> samples);
double percentile_sorted(const std::vector<double>& sorted, double p);
// Relative standard error of the mean (stdev / sqrt(n) / mean); infinity for fewer than 2.
double relative_standard_error(const std::vector<double>& samples);

}  // namespace cb
