#include "collectives/engine/outlier_cause.hpp"

#include <algorithm>

#include "collectives/engine/stats.hpp"
#include "common/record.hpp"

namespace cb {

std::string outlier_cause(const std::vector<double>& samples,
                          const std::vector<BatchFaults>& batches) {
  if (samples.empty()) return "";
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  const double p50 = percentile_sorted(sorted, 50);
  const bool tail = sorted.back() > kOutlierTailFactor * p50;
  const double limit = (tail ? kOutlierTailFactor : kOutlierMeanFactor) * p50;
  std::size_t slow = 0, faulted = 0;
  for (const BatchFaults& b : batches) {
    for (std::size_t i = b.first; i < std::min(b.end, samples.size()); ++i) {
      if (samples[i] <= limit) continue;
      ++slow;
      faulted += b.fault_bytes > 0 ? 1 : 0;
    }
  }
  return slow > 0 && 2 * faulted > slow ? kPageFaultCause : "";
}

}  // namespace cb
