// Statistics for judging runs against each other over repeated launches: medians, the
// Mann-Whitney U test and the Benjamini-Hochberg correction for many comparisons.
#pragma once

#include <vector>

namespace cb {

// The median (the mean of the two middle values for an even count); 0 for no values.
double median_of(std::vector<double> values);

// Sample standard deviation (n - 1); 0 for fewer than two values.
double stddev_of(const std::vector<double>& values);

// One-sided Mann-Whitney U test of "the values in `y` tend to be larger than those in `x`":
// U = number of pairs (x_i, y_j) with y_j > x_i, ties counting one half; the p-value is
// P(U >= observed) under the null hypothesis that both are samples of one distribution. Exact
// (all arrangements equally likely) when there are no ties and at most 40 values; otherwise the
// normal approximation with tie and continuity corrections. 1 when either side is empty.
double mann_whitney_greater(const std::vector<double>& x, const std::vector<double>& y);

// The smallest one-sided p-value the exact test can give for samples of sizes n and m:
// 1 / C(n + m, n).
double mann_whitney_min_p(int n, int m);

// Benjamini-Hochberg adjusted p-values (q-values), in the input's order: a test is significant
// at false discovery rate alpha when its q <= alpha.
std::vector<double> benjamini_hochberg(const std::vector<double>& p);

}  // namespace cb
