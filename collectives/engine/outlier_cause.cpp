#include "collectives/engine/outlier_cause.hpp"

#include <algorithm>
#include <cmath>

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
  std::size_t slow = 0, faulted = 0, preempted = 0;
  for (const BatchFaults& b : batches) {
    std::size_t here = 0;
    for (std::size_t i = b.first; i < std::min(b.end, samples.size()); ++i) {
      here += samples[i] > limit ? 1 : 0;
    }
    slow += here;
    // A page faulted in stalls the call that touches it: a stray page (the kernel reclaiming
    // one) accounts for one slow iteration, a library mapping megabytes for every one. A
    // preemption stalls the call it lands in and the peers' calls that wait for it: a few.
    const auto pages = static_cast<std::size_t>(std::ceil(b.fault_bytes / kPageBytes));
    const std::size_t by_faults = std::min(here, pages);
    faulted += by_faults;
    preempted +=
        std::min(here - by_faults, static_cast<std::size_t>(kSlowPerPreemption * b.preemptions));
  }
  if (slow == 0) return "";
  if (2 * faulted > slow) return kPageFaultCause;
  if (2 * preempted > slow) return kPreemptedCause;
  // A rhythm recurs through the whole measurement; a burst (the host busy for a while) fills a
  // stretch of it. The samples in kSteadySegments equal stretches, in order.
  const std::size_t n = samples.size(), per = n / kSteadySegments;
  std::size_t with_slow = 0;
  for (std::size_t k = 0; per > 0 && k < kSteadySegments; ++k) {
    const auto first = samples.begin() + static_cast<std::ptrdiff_t>(k * per);
    with_slow += std::any_of(first, first + static_cast<std::ptrdiff_t>(per),
                             [&](double x) { return x > limit; })
                     ? 1
                     : 0;
  }
  const bool steady = per > 0 && slow >= kSteadyMinSlow &&
                      static_cast<double>(with_slow) >= kSteadyShare * kSteadySegments;
  return 2 * (slow - faulted - preempted) > slow && steady ? kSteadyCause : "";
}

}  // namespace cb
