#include "report/significance.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace cb {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double stddev_of(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

double mann_whitney_min_p(int n, int m) {
  // 1 / C(n+m, n), computed in doubles.
  double c = 1;
  for (int i = 1; i <= n; ++i) c = c * (m + i) / i;
  return 1 / c;
}

double mann_whitney_greater(const std::vector<double>& x, const std::vector<double>& y) {
  const int n = static_cast<int>(x.size()), m = static_cast<int>(y.size());
  if (n == 0 || m == 0) return 1;
  double u = 0;
  bool ties = false;
  for (double a : x) {
    for (double b : y) {
      if (b > a) {
        u += 1;
      } else if (b == a) {
        u += 0.5;
        ties = true;
      }
    }
  }
  if (!ties && n + m <= 40) {
    // f[i][j][k]: orderings of i x-values and j y-values with U = k. The largest value is either
    // a y, which beats all i x-values, or an x, which no y beats.
    const int max_u = n * m;
    std::vector<std::vector<std::vector<double>>> f(
        n + 1, std::vector<std::vector<double>>(m + 1, std::vector<double>(max_u + 1, 0)));
    for (int i = 0; i <= n; ++i) {
      for (int j = 0; j <= m; ++j) {
        if (i == 0 || j == 0) {
          f[i][j][0] = 1;
          continue;
        }
        for (int k = 0; k <= i * j; ++k) {
          f[i][j][k] = (k >= i ? f[i][j - 1][k - i] : 0) + f[i - 1][j][k];
        }
      }
    }
    double total = 0, tail = 0;
    const int observed = static_cast<int>(std::lround(u));
    for (int k = 0; k <= max_u; ++k) {
      total += f[n][m][k];
      if (k >= observed) tail += f[n][m][k];
    }
    return tail / total;
  }
  // Normal approximation with tie correction.
  std::vector<double> all(x);
  all.insert(all.end(), y.begin(), y.end());
  std::sort(all.begin(), all.end());
  double tie_term = 0;
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i;
    while (j < all.size() && all[j] == all[i]) ++j;
    double t = static_cast<double>(j - i);
    tie_term += t * t * t - t;
    i = j;
  }
  const double N = n + m;
  const double mean = n * m / 2.0;
  const double var = n * m / 12.0 * ((N + 1) - tie_term / (N * (N - 1)));
  if (var <= 0) return u > mean ? 0 : 1;
  const double z = (u - mean - 0.5) / std::sqrt(var);
  return 0.5 * std::erfc(z / std::sqrt(2.0));
}

std::vector<double> benjamini_hochberg(const std::vector<double>& p) {
  const std::size_t m = p.size();
  std::vector<std::size_t> order(m);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
  std::vector<double> q(m);
  double running = 1;
  for (std::size_t r = m; r-- > 0;) {
    std::size_t i = order[r];
    running = std::min(running, p[i] * static_cast<double>(m) / static_cast<double>(r + 1));
    q[i] = running;
  }
  return q;
}

}  // namespace cb
