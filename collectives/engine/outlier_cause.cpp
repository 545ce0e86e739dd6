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
  std::size_t slow = 0, faulted = 0, preempted = 0, with_slow = 0, timed = 0;
  for (const BatchFaults& b : batches) {
    std::size_t here = 0;
    for (std::size_t i = b.first; i < std::min(b.end, samples.size()); ++i) {
      here += samples[i] > limit ? 1 : 0;
    }
    timed += b.end > b.first ? 1 : 0;
    with_slow += here > 0 ? 1 : 0;
    slow += here;
    if (b.fault_bytes > 0) {
      faulted += here;
    } else if (b.preemptions > 0) {
      preempted += here;
    }
  }
  if (slow == 0) return "";
  if (2 * faulted > slow) return kPageFaultCause;
  if (2 * preempted > slow) return kPreemptedCause;
  const bool steady = timed >= 3 && static_cast<double>(with_slow) >= kSteadyBatchShare * timed;
  return 2 * (slow - faulted - preempted) > slow && steady ? kSteadyCause : "";
}

}  // namespace cb
