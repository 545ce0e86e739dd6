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
  EXPECT_EQ(outlier_cause(s, {{0, 10, 8192}, {10, 20, 0}}), kPageFaultCause);
  EXPECT_EQ(outlier_cause(s, {{0, 10, 0}, {10, 20, 8192}}), "");
}

TEST(OutlierCause, AStrayPageAccountsForOneSlowIterationNotForThousands) {
  // A CPU hog's slow calls all through the samples, and one page faulted in the first batch:
  // the preemptions account for them, not the page.
  std::vector<double> s(400, 1.0);
  for (std::size_t i = 0; i < 400; i += 10) s[i] = 50.0;
  std::vector<BatchFaults> b = {{0, 300, 4096, 30}, {300, 400, 0, 10}};
  EXPECT_EQ(outlier_cause(s, b), kPreemptedCause);
  b[0].fault_bytes = 30 * 4096.0;  // a page for each slow call of the batch: most of them
  EXPECT_EQ(outlier_cause(s, b), kPageFaultCause);
}

TEST(OutlierCause, SlowIterationsInAPreemptedBatchArePreemption) {
  const std::vector<BatchFaults> batches = {{0, 10, 0, 1}, {10, 20, 0, 0}};
  EXPECT_EQ(outlier_cause(samples_with({2}), batches), kPreemptedCause);
  EXPECT_EQ(outlier_cause(samples_with({2, 3, 15}), batches), kPreemptedCause);
  EXPECT_EQ(outlier_cause(samples_with({12}), batches), "");
}

TEST(OutlierCause, APreemptionAccountsForAFewSlowIterationsNotForThousands) {
  // 80 slow calls, 20 in each of four batches, and two preemptions in each: eight preemptions
  // account for at most 32 of them, so the rest recur in every batch without a cause outside.
  std::vector<double> s(800, 1.0);
  for (std::size_t i = 0; i < 800; i += 10) s[i] = 50.0;
  std::vector<BatchFaults> b = {
      {0, 200, 0, 2}, {200, 400, 0, 2}, {400, 600, 0, 2}, {600, 800, 0, 2}};
  EXPECT_EQ(outlier_cause(s, b), kSteadyCause);
  for (auto& batch : b) batch.preemptions = 6;  // 24 a batch: 96 > 80, every slow call
  EXPECT_EQ(outlier_cause(s, b), kPreemptedCause);
}

TEST(OutlierCause, PageFaultsComeFirstWhereABatchWasBothFaultedAndPreempted) {
  EXPECT_EQ(outlier_cause(samples_with({2}), {{0, 10, 4096, 3}, {10, 20, 0, 0}}), kPageFaultCause);
}

// 800 samples of 1 us in two quiet batches of 400 (eight stretches of 100).
std::vector<BatchFaults> two_quiet_batches() {
  return {{0, 400}, {400, 800}};
}

// One slow call in every `every` samples of the stretches `stretches` (of eight, of 100 each).
std::vector<double> rhythm(std::size_t every, std::initializer_list<std::size_t> stretches) {
  std::vector<double> s(800, 1.0);
  for (std::size_t k : stretches) {
    for (std::size_t i = 100 * k + 5; i < 100 * (k + 1); i += every) s[i] = 50.0;
  }
  return s;
}

TEST(OutlierCause, SlowCallsThroughTheWholeQuietMeasurementAreTheLibrarysRhythm) {
  const auto b = two_quiet_batches();
  EXPECT_EQ(outlier_cause(rhythm(10, {0, 1, 2, 3, 4, 5, 6, 7}), b), kSteadyCause);  // 80
  EXPECT_EQ(outlier_cause(rhythm(8, {0, 1, 2, 4, 6, 7}), b), kSteadyCause);  // six of eight: 3/4
  EXPECT_EQ(outlier_cause(rhythm(4, {0, 1, 2, 4, 7}), b), "");               // five of eight: not
}

TEST(OutlierCause, AFewSlowCallsSpreadThroughACaseAreNotARhythm) {
  const auto b = two_quiet_batches();
  // Eight stalls, one in each stretch (the host's, a few a second): too few for a rhythm.
  EXPECT_EQ(outlier_cause(rhythm(100, {0, 1, 2, 3, 4, 5, 6, 7}), b), "");
  EXPECT_EQ(outlier_cause(rhythm(14, {0, 1, 2, 3, 4, 5, 6, 7}), b), "");            // 56 of them
  EXPECT_EQ(outlier_cause(rhythm(13, {0, 1, 2, 3, 4, 5, 6, 7}), b), kSteadyCause);  // 64
}

TEST(OutlierCause, ABurstOfSlowCallsHasNoCauseSeen) {
  std::vector<double> s(800, 1.0);
  for (std::size_t i = 300; i < 500; ++i) s[i] = 50.0;  // the host busy for a while
  EXPECT_EQ(outlier_cause(s, two_quiet_batches()), "");
  // Too few samples to cut into stretches.
  EXPECT_EQ(outlier_cause({1.0, 50.0, 1.0}, {{0, 3}}), "");
}

TEST(OutlierCause, ARhythmNeedsMostSlowCallsUnaccountedForByPreemption) {
  const std::vector<double> s = rhythm(10, {0, 1, 2, 3, 4, 5, 6, 7});  // 40 in each batch
  std::vector<BatchFaults> b = two_quiet_batches();
  b[0].preemptions = 10;
  b[1].preemptions = 10;  // accounting for all 80: preemption, not a rhythm
  EXPECT_EQ(outlier_cause(s, b), kPreemptedCause);
}

}  // namespace
}  // namespace cb
