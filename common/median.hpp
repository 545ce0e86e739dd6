// The median, as every figure over ranks, launches or samples states it.
#pragma once

#include <algorithm>
#include <vector>

namespace cb {

// The middle value of `sorted` (ascending), the mean of the two middle ones for an even count;
// 0 for none.
inline double median_of_sorted(const std::vector<double>& sorted) {
  if (sorted.empty()) return 0;
  const std::size_t n = sorted.size();
  return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

// The median of `values` in any order.
inline double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return median_of_sorted(values);
}

}  // namespace cb
