#include "collectives/engine/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "common/median_interval.hpp"

namespace cb {

double percentile_sorted(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  double rank = std::ceil(p / 100.0 * static_cast<double>(sorted.size()));
  std::size_t idx = rank < 1 ? 0 : static_cast<std::size_t>(rank) - 1;
  return sorted[std::min(idx, sorted.size() - 1)];
}

static void mean_stdev(const std::vector<double>& s, double& mean, double& stdev) {
  mean = s.empty() ? 0 : std::accumulate(s.begin(), s.end(), 0.0) / static_cast<double>(s.size());
  double ss = 0;
  for (double v : s) ss += (v - mean) * (v - mean);
  stdev = s.size() > 1 ? std::sqrt(ss / static_cast<double>(s.size() - 1)) : 0;
}

SampleStats summarize(std::vector<double> samples) {
  SampleStats st;
  if (samples.empty()) return st;
  mean_stdev(samples, st.mean, st.stdev);
  st.cv = st.mean > 0 ? st.stdev / st.mean : 0;
  std::sort(samples.begin(), samples.end());
  st.min = samples.front();
  st.max = samples.back();
  st.p50 = percentile_sorted(samples, 50);
  st.p99 = percentile_sorted(samples, 99);
  const MedianRanks ci = median_interval_ranks(samples.size());
  st.p50_low = samples[ci.low - 1];
  st.p50_high = samples[ci.high - 1];
  return st;
}

double relative_standard_error(const std::vector<double>& samples) {
  if (samples.size() < 2) return std::numeric_limits<double>::infinity();
  double mean, stdev;
  mean_stdev(samples, mean, stdev);
  if (mean <= 0) return 0;
  return stdev / std::sqrt(static_cast<double>(samples.size())) / mean;
}

}  // namespace cb
