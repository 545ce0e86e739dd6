#include <gtest/gtest.h>

#include <cmath>

#include "collectives/engine/stats.hpp"

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

}  // namespace
}  // namespace cb
