// A case's slow iterations are put down to page faults, or to preemption, only when most of them
// ran in timed batches that took page faults (or where a rank was preempted); to the calls' own
// rhythm only when they recur through most batches with neither.
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

TEST(OutlierCause, SlowIterationsInAPreemptedBatchArePreemption) {
  const std::vector<BatchFaults> batches = {{0, 10, 0, 1}, {10, 20, 0, 0}};
  EXPECT_EQ(outlier_cause(samples_with({2}), batches), kPreemptedCause);
  EXPECT_EQ(outlier_cause(samples_with({2, 3, 15}), batches), kPreemptedCause);
  EXPECT_EQ(outlier_cause(samples_with({12}), batches), "");
}

TEST(OutlierCause, PageFaultsComeFirstWhereABatchWasBothFaultedAndPreempted) {
  EXPECT_EQ(outlier_cause(samples_with({2}), {{0, 10, 4096, 3}, {10, 20, 0, 0}}), kPageFaultCause);
}

// 40 samples of 1 us in four batches of 10, none faulted or preempted.
std::vector<BatchFaults> four_quiet_batches() {
  return {{0, 10}, {10, 20}, {20, 30}, {30, 40}};
}

TEST(OutlierCause, SlowCallsInEveryQuietBatchAreTheLibrarysRhythm) {
  std::vector<double> s(40, 1.0);
  for (std::size_t i : {3, 13, 23, 33}) s[i] = 50.0;
  EXPECT_EQ(outlier_cause(s, four_quiet_batches()), kSteadyCause);
  s[33] = 1.0;  // three of four batches: still at least 3/4 of them
  EXPECT_EQ(outlier_cause(s, four_quiet_batches()), kSteadyCause);
}

TEST(OutlierCause, SlowCallsInFewQuietBatchesHaveNoCauseSeen) {
  std::vector<double> s(40, 1.0);
  s[3] = s[13] = 50.0;  // two of four batches: a burst, not a rhythm
  EXPECT_EQ(outlier_cause(s, four_quiet_batches()), "");
  // Two batches are too few to tell a rhythm from chance.
  EXPECT_EQ(outlier_cause(samples_with({2, 12}), {{0, 10}, {10, 20}}), "");
}

TEST(OutlierCause, ARhythmNeedsMostSlowCallsOutsideFaultedAndPreemptedBatches) {
  std::vector<double> s(40, 1.0);
  for (std::size_t i : {3, 4, 13, 14, 23, 33}) s[i] = 50.0;
  std::vector<BatchFaults> b = four_quiet_batches();
  b[0].preemptions = 1;
  b[1].preemptions = 1;  // 4 of 6 slow calls preempted: preemption, not a rhythm
  EXPECT_EQ(outlier_cause(s, b), kPreemptedCause);
}

}  // namespace
}  // namespace cb
