#include <gtest/gtest.h>

#include <cmath>

#include "collectives/engine/stats.hpp"
#include "common/median_interval.hpp"

namespace cb {
namespace {

TEST(Stats, NearestRankPercentiles) {
  std::vector<double> s;
  for (int i = 100; i >= 1; --i) s.push_back(i);  // unsorted input
  SampleStats st = summarize(s);
  EXPECT_DOUBLE_EQ(st.min, 1);
  EXPECT_DOUBLE_EQ(st.max, 100);
  EXPECT_DOUBLE_EQ(st.p50, 50);
  EXPECT_DOUBLE_EQ(st.p99, 99);
  EXPECT_DOUBLE_EQ(st.mean, 50.5);
}

TEST(Stats, SmallSamples) {
  SampleStats one = summarize({7});
  EXPECT_DOUBLE_EQ(one.p50, 7);
  EXPECT_DOUBLE_EQ(one.p99, 7);
  EXPECT_DOUBLE_EQ(one.cv, 0);
  SampleStats three = summarize({1, 2, 3});
  EXPECT_DOUBLE_EQ(three.p50, 2);
  EXPECT_DOUBLE_EQ(three.p99, 3);
  EXPECT_DOUBLE_EQ(three.stdev, 1);  // sample standard deviation
  EXPECT_DOUBLE_EQ(three.cv, 0.5);
  SampleStats none = summarize({});
  EXPECT_DOUBLE_EQ(none.mean, 0);
}

TEST(Stats, RelativeStandardError) {
  EXPECT_TRUE(std::isinf(relative_standard_error({1})));
  EXPECT_DOUBLE_EQ(relative_standard_error({2, 2, 2, 2}), 0);
  // stdev 1, n 4, mean 2.5: 1 / 2 / 2.5 ... computed: values 1..4 stdev = 1.290994
  double rse = relative_standard_error({1, 2, 3, 4});
  EXPECT_NEAR(rse, 1.2909944 / 2 / 2.5, 1e-6);
}

// The interval of the median from order statistics, by hand from Binomial(n, 1/2):
// n = 20: P(B <= 3) = 1351 / 2^20 = 0.001288 <= 0.005 < P(B <= 4) = 6196 / 2^20 = 0.005909, so
// [x_(4), x_(17)], coverage 1 - 2 x 0.001288 = 0.997423 (the usual table value for 99 %).
TEST(Stats, MedianIntervalFromOrderStatistics) {
  MedianRanks twenty = median_interval_ranks(20);
  EXPECT_EQ(twenty.low, 4u);
  EXPECT_EQ(twenty.high, 17u);
  EXPECT_NEAR(twenty.coverage, 1 - 2 * 1351.0 / 1048576, 1e-12);
  std::vector<double> s;
  for (int i = 20; i >= 1; --i) s.push_back(i);
  SampleStats st = summarize(s);
  EXPECT_DOUBLE_EQ(st.p50_low, 4);
  EXPECT_DOUBLE_EQ(st.p50_high, 17);
  // n = 8: P(B = 0) = 1/256 <= 0.005: the whole range reaches 1 - 2/256 = 0.992.
  MedianRanks eight = median_interval_ranks(8);
  EXPECT_EQ(eight.low, 1u);
  EXPECT_EQ(eight.high, 8u);
  EXPECT_NEAR(eight.coverage, 1 - 2.0 / 256, 1e-12);
  // n = 5 cannot reach 99 %: min and max, covering 1 - 2/32 = 0.9375.
  MedianRanks five = median_interval_ranks(5);
  EXPECT_EQ(five.low, 1u);
  EXPECT_EQ(five.high, 5u);
  EXPECT_NEAR(five.coverage, 0.9375, 1e-12);
  SampleStats few = summarize({3, 1, 2});
  EXPECT_DOUBLE_EQ(few.p50_low, 1);
  EXPECT_DOUBLE_EQ(few.p50_high, 3);
  // Large n: about n/2 -+ 2.576 sqrt(n)/2 (n = 10000: 4871.2 .. 5128.8).
  MedianRanks big = median_interval_ranks(10000);
  EXPECT_NEAR(static_cast<double>(big.low), 4872, 2);
  EXPECT_EQ(big.high, 10001 - big.low);
  EXPECT_GE(big.coverage, 0.99);
  EXPECT_NEAR(normal_two_sided_z(0.99), 2.5758, 1e-4);
  EXPECT_NEAR(normal_two_sided_z(0.95), 1.95996, 1e-4);
}

}  // namespace
}  // namespace cb
