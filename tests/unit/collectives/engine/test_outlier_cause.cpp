// A case's slow iterations are put down to page faults only when most of them ran in timed
// batches that took page faults.
#include <gtest/gtest.h>

#include "collectives/engine/outlier_cause.hpp"
#include "common/record.hpp"

namespace cb {
namespace {

// 20 samples of 1 us in two batches of 10; `slow` iterations of 50 us at the given indices.
std::vector<double> samples_with(std::initializer_list<std::size_t> slow) {
  std::vector<double> s(20, 1.0);
  for (std::size_t i : slow) s[i] = 50.0;
  return s;
}

TEST(OutlierCause, SlowIterationsInAFaultingBatchArePageFaults) {
  const std::vector<BatchFaults> batches = {{0, 10, 65536}, {10, 20, 0}};
  EXPECT_EQ(outlier_cause(samples_with({2}), batches), kPageFaultCause);
  EXPECT_EQ(outlier_cause(samples_with({2, 3, 15}), batches), kPageFaultCause);  // 2 of 3
}

TEST(OutlierCause, SlowIterationsOutsideFaultingBatchesAreNotPutDownToThem) {
  const std::vector<BatchFaults> batches = {{0, 10, 65536}, {10, 20, 0}};
  EXPECT_EQ(outlier_cause(samples_with({12}), batches), "");
  EXPECT_EQ(outlier_cause(samples_with({2, 12}), batches), "");  // half is not most
  EXPECT_EQ(outlier_cause(samples_with({}), batches), "");       // nothing slow
}

TEST(OutlierCause, WithoutATailTheIterationsAboveOneAndAHalfTimesTheMedianCount) {
  std::vector<double> s(20, 1.0);
  s[3] = s[4] = 2.0;  // slow, yet under 10 x the median
  EXPECT_EQ(outlier_cause(s, {{0, 10, 4096}, {10, 20, 0}}), kPageFaultCause);
  EXPECT_EQ(outlier_cause(s, {{0, 10, 0}, {10, 20, 4096}}), "");
}

}  // namespace
}  // namespace cb
