// What commbench can tell about a case's slow iterations: whether they ran in timed batches that
// took page faults (memory mapped and first touched inside the timed loop), which the row and the
// table's warning then name instead of blaming the machine.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace cb {

// One timed batch: the per-iteration samples it produced, [first, end), and the bytes any rank
// page-faulted in while it ran.
struct BatchFaults {
  std::size_t first = 0, end = 0;
  double fault_bytes = 0;
};

// kPageFaultCause when more than half of the slow iterations among `samples` (each the max over
// ranks) lie in batches that faulted, else "". Slow: above 10 x the median where any are, else
// above 1.5 x it (the has_outliers factors).
std::string outlier_cause(const std::vector<double>& samples,
                          const std::vector<BatchFaults>& batches);

}  // namespace cb
