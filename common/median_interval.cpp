#include "common/median_interval.hpp"

#include <cmath>

namespace cb {

MedianRanks median_interval_ranks(std::size_t n, double confidence) {
  MedianRanks r;
  if (n == 0) return r;
  // P(B <= k) for B ~ Binomial(n, 1/2), summed in logs so that large n does not underflow. The
  // interval [x_(l), x_(n+1-l)] misses the median when l or fewer samples lie on one side of it:
  // with probability 2 P(B <= l - 1).
  const double tail = (1 - confidence) / 2;
  const double dn = static_cast<double>(n);
  double log_pmf = -dn * std::log(2.0);  // log P(B = 0)
  double cdf = 0;
  std::size_t best = 0;
  double best_tail = 0;
  for (std::size_t k = 0; 2 * k + 1 <= n; ++k) {  // l = k + 1 <= high = n - k
    cdf += std::exp(log_pmf);                     // P(B <= k)
    if (cdf > tail) break;
    best = k + 1;
    best_tail = cdf;
    log_pmf += std::log(dn - static_cast<double>(k)) - std::log(static_cast<double>(k) + 1);
  }
  if (best == 0) {
    // Even the whole range falls short of the confidence: it is what there is.
    r.low = 1;
    r.high = n;
    r.coverage = 1 - std::pow(0.5, dn - 1);
    return r;
  }
  r.low = best;
  r.high = n + 1 - best;
  r.coverage = 1 - 2 * best_tail;
  return r;
}

double normal_two_sided_z(double coverage) {
  // Bisection on erf: P(|Z| <= z) = erf(z / sqrt 2).
  double lo = 0, hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (std::erf(mid / std::sqrt(2.0)) < coverage ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

}  // namespace cb
