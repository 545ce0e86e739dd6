// What commbench can tell about a case's slow iterations, from what it reads around each timed
// batch: page faults (memory mapped and first touched inside the timed loop), preemption (a
// rank's thread switched out for another thread or process), or neither while they recur through
// the whole measurement (the calls themselves are slow at a steady rhythm). The row and the
// table's warning then name it instead of guessing.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace cb {

// One timed batch: the per-iteration samples it produced, [first, end), the bytes any rank
// page-faulted in while it ran, and the times any rank's thread was switched out involuntarily.
struct BatchFaults {
  std::size_t first = 0, end = 0;
  double fault_bytes = 0;
  double preemptions = 0;
};

// The cause of the slow iterations among `samples` (each the max over ranks). In each batch
// the pages faulted in account for one slow iteration each, and the preemptions (the most of any
// rank) for kSlowPerPreemption each of the rest. kPageFaultCause when faults account for more
// than half of all slow iterations; kPreemptedCause when preemptions do; kSteadyCause when
// neither accounts for most, there are at least kSteadyMinSlow slow iterations, and they recur in
// at least kSteadyShare of kSteadySegments equal stretches of the samples, in order; else "".
// Slow: above 10 x the median where any are, else above 1.5 x it (the has_outliers factors).
std::string outlier_cause(const std::vector<double>& samples,
                          const std::vector<BatchFaults>& batches);

inline constexpr std::size_t kSteadySegments = 8;
inline constexpr double kSteadyShare = 0.75;
// A library's rhythm stalls a share of its calls (Open MPI's rooted calls of 8-512 B: one in
// 14-64, hundreds a case); a few stalls spread through a short case are the host's.
inline constexpr std::size_t kSteadyMinSlow = 64;
inline constexpr double kSlowPerPreemption = 4;
inline constexpr double kPageBytes = 4096;

}  // namespace cb
