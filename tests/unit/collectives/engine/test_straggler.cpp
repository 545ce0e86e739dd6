// The straggler rule over the cases' lateness: hand-computed cases.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "collectives/engine/straggler.hpp"

namespace cb {
namespace {

// A process over `calls` calls of 100 us each (its whole time), late by `late` us a call, last in
// `last` of them, having caused `caused` us of the others' waiting.
RankLateness rank(int r, std::uint64_t calls, std::uint64_t last, double late, double caused,
                  double error = 0) {
  RankLateness x;
  x.rank = r;
  x.calls = calls;
  x.last_calls = last;
  x.late_us = late * static_cast<double>(calls);
  x.caused_us = caused;
  x.time_us = 100.0 * static_cast<double>(calls);
  x.between_us = late * static_cast<double>(calls);  // its lateness is its own, between calls
  x.inside_us = 10.0 * static_cast<double>(calls);
  x.clock_error_us = error;
  x.median_late_us = late;
  x.median_between_us = late;
  x.median_inside_us = 10;
  return x;
}

// The same lateness, coming from inside the previous call: the rank left it `late` us after
// the first rank out, and spent no time of its own between calls.
RankLateness from_inside(RankLateness x, double late) {
  x.between_us = 0;
  x.median_between_us = 0;
  x.late_exit_us = late * static_cast<double>(x.calls);
  x.median_late_exit_us = late;
  return x;
}

RankPlace place(int r, int per_host = 1) {
  return {r, fmt::format("h{}", r / per_host + 1), std::nullopt, r};
}

LatenessCase one_case(std::vector<RankLateness> ranks, int per_host = 1) {
  LatenessCase c;
  for (const auto& r : ranks) c.places.push_back(place(r.rank, per_host));
  c.ranks = std::move(ranks);
  return c;
}

// Four ranks, 100 calls: rank 2 last in `last` of them, 40 us late a call, each other rank
// waiting `wait` us a call for it (so it caused 3 x wait x 100).
LatenessCase rank_2_late(std::uint64_t last = 95, double wait = 40, std::uint64_t calls = 100,
                         double error = 0) {
  const double others = static_cast<double>(calls - last) / 3;
  auto o = static_cast<std::uint64_t>(others);
  return one_case({rank(0, calls, o, 1, 10, error), rank(1, calls, o, 1, 10, error),
                   rank(2, calls, last, 40, 3 * wait * static_cast<double>(calls), error),
                   rank(3, calls, calls - last - 2 * o, 1, 10, error)});
}

TEST(Straggler, RankTheOthersWaitForIsFoundWithItsPlaceAndFigures) {
  auto s = judge_straggler({rank_2_late()});
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->found);
  EXPECT_EQ(s->rank, 2);
  EXPECT_EQ(s->host, "h3");
  EXPECT_EQ(s->core, 2);
  EXPECT_EQ(s->component, "rank");
  EXPECT_EQ(s->calls, 100u);
  EXPECT_EQ(s->last_calls, 95u);
  EXPECT_EQ(s->participants, 4);
  EXPECT_DOUBLE_EQ(s->late_us, 40);
  // It caused 12000 us of the others' 30000 us: 40 %, 40 us a call for each of the 3 others.
  EXPECT_DOUBLE_EQ(s->delay_cost, 0.4);
  EXPECT_DOUBLE_EQ(s->wait_us, 40);
  EXPECT_DOUBLE_EQ(s->inside_us, 10);
  EXPECT_EQ(s->where, "before the call");
  EXPECT_EQ(s->slowest_cases, 1);
  EXPECT_EQ(s->cases, 1);
  const std::string line = straggler_warning(*s);
  EXPECT_EQ(line.rfind("straggler: rank 2 (h3, core 2) entered last in 95 of 100 calls, 40 us "
                       "after the first rank on average; the others waited for it 40 us a "
                       "call, 40% of their time (the delay cost): late before the call",
                       0),
            0u)
      << line;
  EXPECT_NE(line.find("last in at least 62.5% of 20 or more calls (halfway from 1 in 4 to all)"),
            std::string::npos)
      << line;
}

TEST(Straggler, RanksTakingTurnsAtTheLastPlaceAreNoise) {
  auto c = one_case({rank(0, 100, 25, 10, 2000), rank(1, 100, 25, 10, 2100),
                     rank(2, 100, 25, 10, 2000), rank(3, 100, 25, 10, 2000)});
  auto s = judge_straggler({c});
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->found);
  EXPECT_EQ(s->rank, 1);  // the one that cost the most, reported all the same
}

TEST(Straggler, LastShareExactlyAtTheThresholdCountsAndJustUnderDoesNot) {
  // 4 ranks: halfway from 1 in 4 to all is 62.5 %, 125 of 200 calls.
  EXPECT_DOUBLE_EQ(last_share_needed(4), 0.625);
  EXPECT_DOUBLE_EQ(last_share_needed(2), 0.75);
  EXPECT_TRUE(judge_straggler({rank_2_late(125, 40, 200)})->found);
  EXPECT_FALSE(judge_straggler({rank_2_late(124, 40, 200)})->found);
}

TEST(Straggler, TooFewCallsAreNotJudged) {
  EXPECT_FALSE(judge_straggler({rank_2_late(19, 40, 19)})->found);
  EXPECT_TRUE(judge_straggler({rank_2_late(20, 40, 20)})->found);
}

TEST(Straggler, DelayCostUnderTheFloorIsNoise) {
  // Last in every call, but the others wait 9.9 us of their 100: under 10 %.
  EXPECT_FALSE(judge_straggler({rank_2_late(100, 9.9)})->found);
  EXPECT_TRUE(judge_straggler({rank_2_late(100, 10)})->found);
}

TEST(Straggler, LatenessWithinTheClockErrorIsNotNamed) {
  // 40 us late; each clock may be off by 10 us, a pair by 20: not beyond 2 x 20.
  EXPECT_FALSE(judge_straggler({rank_2_late(95, 40, 100, 10)})->found);
  EXPECT_TRUE(judge_straggler({rank_2_late(95, 40, 100, 9.9)})->found);
}

TEST(Straggler, CallsOfEveryCaseAddUp) {
  // Ten cases of 4 calls: too few alone, enough together.
  std::vector<LatenessCase> cases;
  for (int i = 0; i < 10; ++i) cases.push_back(rank_2_late(4, 40, 4));
  auto s = judge_straggler(cases);
  EXPECT_TRUE(s->found);
  EXPECT_EQ(s->calls, 40u);
  EXPECT_EQ(s->cases, 10);
  EXPECT_EQ(s->slowest_cases, 10);
  EXPECT_FALSE(judge_straggler({rank_2_late(4, 40, 4)})->found);
}

TEST(Straggler, RanksOfOneHostLateTogetherNameTheHost) {
  // Three hosts of two ranks; both ranks of h2 (2 and 3) are 40 us late and take turns at the
  // last place: neither alone is last in 7 of 12 calls (halfway from 1 in 6), the host is last
  // in all of them (more than halfway from 1 in 3 hosts).
  auto c = one_case({rank(0, 100, 0, 1, 0), rank(1, 100, 0, 1, 0), rank(2, 100, 50, 40, 6000),
                     rank(3, 100, 50, 39, 6100), rank(4, 100, 0, 1, 0), rank(5, 100, 0, 1, 0)},
                    2);
  auto s = judge_straggler({c});
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->found);
  EXPECT_EQ(s->component, "host");
  EXPECT_EQ(s->host, "h2");
  EXPECT_EQ(s->rank, 3);  // the one that cost the most
  EXPECT_EQ(s->host_ranks, (std::vector<int>{2, 3}));
  EXPECT_EQ(s->last_calls, 100u);
  EXPECT_EQ(s->participants, 3);
  // 12100 us of the other hosts' 40000 us.
  EXPECT_DOUBLE_EQ(s->delay_cost, 12100.0 / 40000.0);
  EXPECT_EQ(straggler_warning(*s).rfind("straggler: rank 3 (h2, core 3) and every rank of host "
                                        "h2 (ranks 2, 3) entered the calls late together: the "
                                        "host",
                                        0),
            0u)
      << straggler_warning(*s);
}

TEST(Straggler, OneLateRankOfAHostIsThatRank) {
  // Rank 3 late, rank 2 on the same host not: the rank, not its host.
  auto c = one_case({rank(0, 100, 2, 1, 10), rank(1, 100, 1, 1, 10), rank(2, 100, 1, 1, 10),
                     rank(3, 100, 95, 40, 12000), rank(4, 100, 1, 1, 10), rank(5, 100, 0, 1, 0)},
                    2);
  auto s = judge_straggler({c});
  EXPECT_TRUE(s->found);
  EXPECT_EQ(s->component, "rank");
  EXPECT_EQ(s->rank, 3);
  EXPECT_TRUE(s->host_ranks.empty());
}

TEST(Straggler, LateFromInsideTheCallIsNamedOnlyCaseAfterCase) {
  // Rank 2 leaves each call 40 us after the first rank out (the call takes 10 us once all are
  // in): in one case that may be the collective's own order of finishing, so it is not named.
  auto c = rank_2_late();
  c.ranks[2] = from_inside(c.ranks[2], 40);
  auto one = judge_straggler({c});
  EXPECT_EQ(one->where, "inside the call");
  EXPECT_FALSE(one->found);
  // The most costly in 3 of 4 cases: named, saying where the time went.
  auto other = rank_2_late();
  other.ranks[2] = from_inside(other.ranks[2], 40);
  other.ranks[1].caused_us = 20000;
  auto s = judge_straggler({c, c, c, other});
  EXPECT_TRUE(s->found);
  EXPECT_EQ(s->slowest_cases, 3);
  EXPECT_NE(straggler_warning(*s).find("late from inside the previous call (it left each 40 us "
                                       "after the first rank out"),
            std::string::npos)
      << straggler_warning(*s);
  // In 2 of 4 only: not named.
  EXPECT_FALSE(judge_straggler({c, c, other, other})->found);
}

TEST(Straggler, LeavingLastByLessThanTheCallTakesIsTheCollectivesOrder) {
  // A ring's last hop: rank 3 leaves every call of every case 5 us after rank 0 and so enters
  // the next one last, but the call takes 10 us once all are in.
  auto c = rank_2_late();
  c.ranks[2] = from_inside(c.ranks[2], 5);
  c.ranks[2].median_late_us = 5;
  EXPECT_FALSE(judge_straggler({c, c, c, c, c})->found);
  c.ranks[2] = from_inside(c.ranks[2], 11);
  EXPECT_TRUE(judge_straggler({c, c, c, c, c})->found);
}

TEST(Straggler, CaseSummaryNamesTheRankTheOthersWaitedFor) {
  auto c = rank_2_late();
  for (auto& r : c.ranks) r.wait_us = 30.0 * 100;
  auto l = case_lateness(c);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->rank, 2);
  EXPECT_EQ(l->host, "h3");
  EXPECT_EQ(l->calls, 100u);
  EXPECT_DOUBLE_EQ(l->last_share, 0.95);
  EXPECT_DOUBLE_EQ(l->late_us, 40);
  EXPECT_DOUBLE_EQ(l->delay_cost, 0.4);
  EXPECT_DOUBLE_EQ(l->wait_us, 30);
  EXPECT_DOUBLE_EQ(l->inside_us, 10);
}

TEST(Straggler, NothingJudgedNoJudgement) {
  EXPECT_FALSE(judge_straggler({}));
  EXPECT_FALSE(judge_straggler({LatenessCase{}}));
  EXPECT_FALSE(case_lateness(LatenessCase{}));
}

}  // namespace
}  // namespace cb
