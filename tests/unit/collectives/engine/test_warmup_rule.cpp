// The adaptive warm-up's rule: it goes on while the batches take page faults or their time still
// falls, stops for a library that faults on every call at a steady rate, and never passes its
// bound. Hand-made batches; the numbers are microseconds and bytes per iteration.
#include <gtest/gtest.h>

#include "collectives/engine/warmup_rule.hpp"

namespace cb {
namespace {

// A fifth of a 50 ms budget before settling, the budget itself as the bound.
WarmupRule rule() {
  return WarmupRule({.min_us = 10000, .min_iters = 1000, .max_us = 50000, .max_iters = 10000});
}

WarmupBatch batch(std::uint64_t n, double per_iter_us, double fault_bytes = 0) {
  return {n, per_iter_us * static_cast<double>(n), per_iter_us, fault_bytes};
}

TEST(WarmupRule, SettlesOnceEnoughIsSpentWithoutFaultsAndTimeNoLongerFalls) {
  WarmupRule r = rule();
  EXPECT_EQ(r.first(), 1u);
  EXPECT_EQ(r.next(batch(1, 8000)), 2u);  // the first call: slow
  EXPECT_EQ(r.next(batch(2, 1000)), 4u);  // 10 ms spent, but the time fell from 8 ms to 1 ms
  EXPECT_EQ(r.next(batch(4, 990)), 0u);   // 0.99 of the batch before: no longer falling
  EXPECT_EQ(r.end(), WarmupEnd::Settled);
  EXPECT_EQ(r.done(), 7u);
}

TEST(WarmupRule, GoesOnWhileTheLastBatchTookPageFaults) {
  WarmupRule r = rule();
  r.next(batch(1, 8000, 4 << 20));
  r.next(batch(2, 1000, 4 << 20));
  EXPECT_EQ(r.next(batch(4, 1000, 64 << 10)), 8u);  // enough time, steady time, but faults
  EXPECT_EQ(r.end(), WarmupEnd::Running);
  EXPECT_EQ(r.next(batch(8, 1000)), 0u);
  EXPECT_EQ(r.end(), WarmupEnd::Settled);
}

// A library that grows its pools in its first calls faults at the same rate in the first
// batches; only kWarmupFaultingBatches steady batches in a row mark faults on every call.
TEST(WarmupRule, FaultsOnEveryCallAtASteadyRateEndItAfterFourBatches) {
  WarmupRule r = rule();
  r.next(batch(1, 3000, 1 << 20));
  r.next(batch(2, 3000, 1 << 20));
  EXPECT_EQ(r.next(batch(4, 3000, 1 << 20)), 8u);  // three steady batches could be a first stretch
  EXPECT_EQ(r.next(batch(8, 3000, 0.8 * (1 << 20))), 0u);  // within 1.5 x: the library's way
  EXPECT_EQ(r.end(), WarmupEnd::FaultsEveryCall);
}

// Batches cut short by the time bound hold too few calls to tell a library that faults on every
// call from one that faults in its first calls only.
TEST(WarmupRule, FourSteadyBatchesOfTooFewCallsAreNotTheLibrarysWay) {
  WarmupRule r({.min_us = 1000, .min_iters = 1000, .max_us = 300000, .max_iters = 10000});
  r.next(batch(1, 24000, 1 << 22));
  r.next(batch(2, 24000, 1 << 22));
  EXPECT_EQ(r.next(batch(4, 24000, 1 << 22)), 5u);  // 132 ms left: 5 calls fit, not 8
  EXPECT_EQ(r.next(batch(5, 24000, 1 << 22)), 1u);  // 12 calls in four steady batches
  EXPECT_EQ(r.end(), WarmupEnd::Running);
}

TEST(WarmupRule, FaultsThatFadeAreWaitedOut) {
  WarmupRule r({.min_us = 100, .min_iters = 1000, .max_us = 1e9, .max_iters = 10000});
  r.next(batch(1, 100, 1 << 20));
  r.next(batch(2, 100, 1 << 20));
  r.next(batch(4, 100, 1 << 20));
  EXPECT_EQ(r.next(batch(8, 100, (1 << 20) / 8)), 16u);  // 1 call of 8 faulted: not steady
  EXPECT_EQ(r.next(batch(16, 100)), 0u);
  EXPECT_EQ(r.end(), WarmupEnd::Settled);
}

TEST(WarmupRule, NeverRunsPastItsTimeBound) {
  WarmupRule r = rule();
  EXPECT_EQ(r.next(batch(1, 20000, 1 << 20)), 1u);  // 30 ms left: one more 20 ms call fits
  EXPECT_EQ(r.next(batch(1, 20000, 1 << 20)), 1u);  // 10 ms left: still at least one
  EXPECT_EQ(r.next(batch(1, 20000, 1 << 20)), 0u);  // 60 ms: past the bound
  EXPECT_EQ(r.end(), WarmupEnd::Bound);
}

TEST(WarmupRule, NeverRunsPastItsIterationBound) {
  WarmupRule r({.min_us = 1e9, .min_iters = 1000, .max_us = 1e9, .max_iters = 10000});
  std::uint64_t n = r.first(), done = 0;
  double t = 1.0;
  while (n) {  // a time that keeps falling never settles
    done += n;
    t *= 0.5;
    n = r.next(batch(n, t));
  }
  EXPECT_EQ(done, 10000u);
  EXPECT_EQ(r.end(), WarmupEnd::Bound);
}

TEST(WarmupRule, SmallMessagesSettleAtTheIterationCountWithoutWaitingForTheTime) {
  WarmupRule r = rule();
  std::uint64_t n = r.first();
  while (n && r.done() < 1023) n = r.next(batch(n, 0.2));  // 1 + 2 + ... + 512 iterations
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(r.end(), WarmupEnd::Settled);
  EXPECT_EQ(r.done(), 1023u);
}

}  // namespace
}  // namespace cb
