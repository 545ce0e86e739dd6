// Lateness and the clocks behind it: hand-computed offsets, late arrivals, waits and delay costs.
#include <gtest/gtest.h>

#include "collectives/engine/clock_sync.hpp"
#include "collectives/engine/lateness.hpp"

namespace cb {
namespace {

TEST(ClockOffset, ShortestRoundTripGivesTheOffsetAndItsBound) {
  // The peer's clock is 5000 us ahead. Trip 1: 3 us out, 7 us back (round trip 10, midpoint
  // 105): the answer 5103 says 4998, half the round trip (5) bounds the error. Trip 2 is longer
  // (40 us) and is not used.
  std::vector<RoundTrip> trips{{100, 5103, 110}, {200, 5230, 240}};
  ClockOffset o = offset_from(trips);
  EXPECT_DOUBLE_EQ(o.offset_us, 4998);
  EXPECT_DOUBLE_EQ(o.error_us, 5);
  EXPECT_LE(std::abs(o.offset_us - 5000), o.error_us);  // the truth is within the bound
}

TEST(ClockOffset, OffsetsComposeAlongAPathAndTheirErrorsAdd) {
  ClockOffset ab{10, 1}, bc{-3, 2};
  ClockOffset ac = compose(ab, bc);
  EXPECT_DOUBLE_EQ(ac.offset_us, 7);
  EXPECT_DOUBLE_EQ(ac.error_us, 3);
}

TEST(ClockOffset, LineInterpolatesADriftBetweenBeforeAndAfter) {
  ClockLine line{1000, 2000, {50, 2}, {60, 3}};
  EXPECT_DOUBLE_EQ(line.offset_at(1500), 55);
  EXPECT_DOUBLE_EQ(line.offset_at(500), 50);  // held at the ends
  EXPECT_DOUBLE_EQ(line.offset_at(2500), 60);
  EXPECT_DOUBLE_EQ(line.error_us(), 3);
}

TEST(ClockOffset, TreeMeetsEveryRankOnceAfterItsParent) {
  auto levels = clock_tree(5);
  ASSERT_EQ(levels.size(), 3u);
  auto pairs = [](const std::vector<TreeEdge>& l) {
    std::vector<std::pair<int, int>> out;
    for (auto e : l) out.push_back({e.parent, e.child});
    return out;
  };
  EXPECT_EQ(pairs(levels[0]), (std::vector<std::pair<int, int>>{{0, 4}}));
  EXPECT_EQ(pairs(levels[1]), (std::vector<std::pair<int, int>>{{0, 2}}));
  EXPECT_EQ(pairs(levels[2]), (std::vector<std::pair<int, int>>{{0, 1}, {2, 3}}));
  for (int n = 1; n <= 33; ++n) {
    std::vector<int> known(static_cast<std::size_t>(n), 0);
    known[0] = 1;
    for (const auto& level : clock_tree(n)) {
      for (auto e : level) {
        EXPECT_EQ(known[static_cast<std::size_t>(e.parent)], 1) << n;
        EXPECT_EQ(known[static_cast<std::size_t>(e.child)], 0) << n;
        known[static_cast<std::size_t>(e.child)] = 2;  // known only after its level
      }
      for (int& k : known) k = k ? 1 : 0;
    }
    for (int k : known) EXPECT_EQ(k, 1) << n;
  }
  EXPECT_TRUE(clock_tree(1).empty());
}

// Three ranks, two calls, the collective needs every rank. Ranks 0 and 1 come straight back;
// rank 2 spends 40 us between calls (a data loader), and the call takes 10 us once all are in:
//   rank 0: enters 0, 50;  leaves 50, 100
//   rank 1: enters 2, 52;  leaves 52, 100
//   rank 2: enters 40, 90; leaves 50, 100 (then 40 us of its own before its second call)
std::vector<Arrivals> late_rank_2() {
  return {{{0, 50}, {50, 100}, {50, 100}},
          {{2, 52}, {52, 100}, {52, 100}},
          {{40, 90}, {50, 100}, {90, 100}}};
}

TEST(Lateness, LateRankCausesTheOthersWaitsInsideTheCall) {
  auto r = lateness_of(late_rank_2(), {0, 1, 2}, -1, WaitPattern::Everyone, {0, 0, 0});
  ASSERT_EQ(r.size(), 3u);
  // Waits: rank 0 40 + 40, rank 1 38 + 38; rank 2 none. Both calls' waits (78 each) are rank 2's.
  EXPECT_DOUBLE_EQ(r[0].wait_us, 80);
  EXPECT_DOUBLE_EQ(r[1].wait_us, 76);
  EXPECT_DOUBLE_EQ(r[2].wait_us, 0);
  EXPECT_DOUBLE_EQ(r[2].caused_us, 156);
  EXPECT_DOUBLE_EQ(r[0].caused_us, 0);
  EXPECT_EQ(r[2].last_calls, 2u);
  EXPECT_EQ(r[0].last_calls, 0u);
  // Late arrivals against the earliest entry: 0, 2 + 2, 40 + 40.
  EXPECT_DOUBLE_EQ(r[0].late_us, 0);
  EXPECT_DOUBLE_EQ(r[1].late_us, 4);
  EXPECT_DOUBLE_EQ(r[2].late_us, 80);
  // Rank 2's own time between calls, and exits after the first out (rank 1's first call).
  EXPECT_DOUBLE_EQ(r[2].between_us, 40);
  EXPECT_DOUBLE_EQ(r[1].late_exit_us, 2);
  EXPECT_DOUBLE_EQ(r[2].late_exit_us, 0);
  // The call once all are in: 50 - 40 and 100 - 90.
  for (const auto& x : r) EXPECT_DOUBLE_EQ(x.inside_us, 20);
  EXPECT_DOUBLE_EQ(r[0].time_us, 100);
  EXPECT_DOUBLE_EQ(r[1].time_us, 98);
  EXPECT_DOUBLE_EQ(r[2].time_us, 60);
}

// Rank 2's clock reads 5000 us ahead: far more than the 10 us the call takes.
std::vector<CallStamps> skewed_batch(double skew) {
  // One batch of three calls per rank; the first call is the harness's and is not judged.
  CallStamps b;
  b.entry = {-60 + skew, 40 + skew, 90 + skew};
  b.exit = {-10 + skew, 50 + skew, 100 + skew};
  return {b};
}

TEST(Lateness, SkewedClockIsTakenOffBeforeJudging) {
  auto arrivals = late_rank_2();
  // Uncorrected, rank 2 seems to enter 5000 us after the others have left: each of them waits
  // its whole stay (50 us a call), which says nothing.
  Arrivals raw = judged_calls(skewed_batch(5000), ClockLine{});
  EXPECT_DOUBLE_EQ(raw.entry[0], 5040);
  auto wrong =
      lateness_of({arrivals[0], arrivals[1], raw}, {0, 1, 2}, -1, WaitPattern::Everyone, {0, 0, 0});
  EXPECT_DOUBLE_EQ(wrong[0].wait_us, 100);
  // The estimate (4998 +- 5 before, 4998 +- 4 after) puts rank 2 2 us late of the truth, within
  // its bound: the waits move by 2 us a call, not by 5000.
  ClockLine line{0, 200, {4998, 5}, {4998, 4}};
  Arrivals fixed = judged_calls(skewed_batch(5000), line);
  EXPECT_DOUBLE_EQ(fixed.entry[0], 42);
  EXPECT_DOUBLE_EQ(fixed.entry[1], 92);
  EXPECT_DOUBLE_EQ(fixed.next[0], 92);
  EXPECT_DOUBLE_EQ(fixed.next[1], 102);  // the batch's last call ends at its exit
  auto r = lateness_of({arrivals[0], arrivals[1], fixed}, {0, 1, 2}, -1, WaitPattern::Everyone,
                       {0, 0, line.error_us()});
  EXPECT_DOUBLE_EQ(r[0].wait_us, 84);
  EXPECT_DOUBLE_EQ(r[1].wait_us, 80);
  EXPECT_DOUBLE_EQ(r[2].caused_us, 164);
  EXPECT_DOUBLE_EQ(r[2].late_us, 84);
  EXPECT_DOUBLE_EQ(r[2].clock_error_us, 5);
  // A skew given as such (the test fault's) is added before the line's offset is taken off.
  Arrivals same = judged_calls(skewed_batch(0), line, 5000);
  EXPECT_EQ(same.entry, fixed.entry);
}

TEST(Lateness, BroadcastRanksWaitForTheRootOnly) {
  // Root 1 enters at 30; ranks 0 and 2 at 0 and 10 wait 30 and 20, the root's doing. Rank 2 is
  // last once (call 1) but nobody waits for a non-root in a broadcast.
  std::vector<Arrivals> a = {{{0, 40}, {35, 75}, {40, 80}},
                             {{30, 60}, {35, 75}, {60, 80}},
                             {{10, 70}, {35, 75}, {70, 80}}};
  auto r = lateness_of(a, {0, 1, 2}, 1, WaitPattern::FromRoot, {0, 0, 0});
  // Call 0: waits 30, 0, 20; call 1: the root (60) after rank 0 (40) only: 20, 0, 0.
  EXPECT_DOUBLE_EQ(r[0].wait_us, 50);
  EXPECT_DOUBLE_EQ(r[2].wait_us, 20);
  EXPECT_DOUBLE_EQ(r[1].caused_us, 70);
  EXPECT_DOUBLE_EQ(r[2].caused_us, 0);
  EXPECT_EQ(r[2].last_calls, 1u);
}

TEST(Lateness, ReduceRootWaitsForTheLastRank) {
  // Root 0 enters at 0 and waits for rank 2 (25); rank 1, in before rank 2, waits for no one.
  std::vector<Arrivals> a = {{{0}, {30}, {30}}, {{5}, {10}, {10}}, {{25}, {28}, {28}}};
  auto r = lateness_of(a, {0, 1, 2}, 0, WaitPattern::ToRoot, {0, 0, 0});
  EXPECT_DOUBLE_EQ(r[0].wait_us, 25);
  EXPECT_DOUBLE_EQ(r[1].wait_us, 0);
  EXPECT_DOUBLE_EQ(r[2].caused_us, 25);
}

TEST(Lateness, AWaitIsNoLongerThanTheStay) {
  // Rank 1 enters at 100 but rank 0 left at 20 (a non-blocking broadcast root would): rank 0's
  // wait is its stay, 20 us, not 100.
  std::vector<Arrivals> a = {{{0}, {20}, {20}}, {{100}, {110}, {110}}};
  auto r = lateness_of(a, {0, 1}, -1, WaitPattern::Everyone, {0, 0});
  EXPECT_DOUBLE_EQ(r[0].wait_us, 20);
}

TEST(Lateness, FiguresTravelAsTextExactly) {
  auto r = lateness_of(late_rank_2(), {0, 1, 2}, -1, WaitPattern::Everyone, {0.1, 0.25, 1e-7});
  for (const auto& x : r) EXPECT_EQ(rank_lateness_from_text(to_text(x)), x);
}

TEST(Lateness, PointToPointIsNotJudged) {
  EXPECT_EQ(wait_pattern(Collective::SendRecv), WaitPattern::None);
  EXPECT_EQ(wait_pattern(Collective::AllReduce), WaitPattern::Everyone);
  EXPECT_EQ(wait_pattern(Collective::Barrier), WaitPattern::Everyone);
  EXPECT_EQ(wait_pattern(Collective::Scatter), WaitPattern::FromRoot);
  EXPECT_EQ(wait_pattern(Collective::Gather), WaitPattern::ToRoot);
  EXPECT_TRUE(lateness_of(late_rank_2(), {0, 1, 2}, -1, WaitPattern::None, {0, 0, 0}).empty());
}

}  // namespace
}  // namespace cb
