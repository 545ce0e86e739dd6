// The straggler rule over per-case rank times: hand-computed cases.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "collectives/engine/straggler.hpp"

namespace cb {
namespace {

// One case whose slowest rank is `rank`, `ratio` x the median rank (median 10 us).
RankTimes slowest(int rank, double ratio, std::optional<int> gpu = std::nullopt) {
  RankTimes t;
  t.min_us = 9;
  t.median_us = 10;
  t.max_us = 10 * ratio;
  t.slowest_rank = rank;
  t.slowest_host = fmt::format("h{}", rank / 2);
  t.slowest_gpu = gpu;
  return t;
}

TEST(Straggler, ClearStragglerIsFoundWithItsPlaceAndFigures) {
  // Rank 5 slowest in 9 of 10 cases at 1.2, 1.3 (x4), 1.4 (x4): the median of its 9 ratios is
  // the 5th smallest, 1.3.
  std::vector<RankTimes> cases{slowest(5, 1.2, 5), slowest(1, 1.05)};
  for (int i = 0; i < 4; ++i) cases.push_back(slowest(5, 1.3, 5));
  for (int i = 0; i < 4; ++i) cases.push_back(slowest(5, 1.4, 5));
  auto s = judge_straggler(cases);
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->found);
  EXPECT_EQ(s->rank, 5);
  EXPECT_EQ(s->host, "h2");
  EXPECT_EQ(s->gpu, 5);
  EXPECT_EQ(s->slowest_cases, 9);
  EXPECT_EQ(s->cases, 10);
  EXPECT_DOUBLE_EQ(s->ratio, 1.3);
  EXPECT_EQ(straggler_warning(*s).substr(0, 62),
            "straggler: rank 5 (h2, GPU 5) was slowest in 9 of 10 cases, 1.");
  EXPECT_NE(straggler_warning(*s).find("1.30x the median rank"), std::string::npos);
}

TEST(Straggler, RotatingSlowestRanksAreNoise) {
  // Ranks 0-3 take turns, each slowest in 3 of 12 cases at 1.5x: a tie, the lowest rank named.
  std::vector<RankTimes> cases;
  for (int i = 0; i < 12; ++i) cases.push_back(slowest(i % 4, 1.5));
  auto s = judge_straggler(cases);
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->found);
  EXPECT_EQ(s->rank, 0);
  EXPECT_EQ(s->slowest_cases, 3);
  EXPECT_DOUBLE_EQ(s->ratio, 1.5);
}

TEST(Straggler, TooFewCasesAreNotJudged) {
  // 7 of 7 cases at 2x: below the 8 cases the rule needs.
  std::vector<RankTimes> cases(7, slowest(2, 2.0));
  auto s = judge_straggler(cases);
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->found);
  EXPECT_EQ(s->slowest_cases, 7);
  cases.push_back(slowest(2, 2.0));  // the 8th case: judged, and found
  EXPECT_TRUE(judge_straggler(cases)->found);
}

TEST(Straggler, ShareExactlyAtTheThresholdCountsAndJustUnderDoesNot) {
  // 6 of 8 cases is exactly 75%.
  std::vector<RankTimes> cases(6, slowest(3, 1.5));
  cases.push_back(slowest(0, 1.5));
  cases.push_back(slowest(1, 1.5));
  EXPECT_TRUE(judge_straggler(cases)->found);
  // 6 of 9 is 67%.
  cases.push_back(slowest(2, 1.5));
  auto s = judge_straggler(cases);
  EXPECT_FALSE(s->found);
  EXPECT_EQ(s->rank, 3);
}

TEST(Straggler, MarginJustUnderTheRatioIsNoise) {
  // Slowest in all 10 cases, but only 1.09x the median rank (the rule asks 1.1x).
  std::vector<RankTimes> cases(10, slowest(1, 1.09));
  auto s = judge_straggler(cases);
  EXPECT_FALSE(s->found);
  EXPECT_DOUBLE_EQ(s->ratio, 1.09);
  cases.assign(10, slowest(1, 1.1));
  EXPECT_TRUE(judge_straggler(cases)->found);
}

TEST(Straggler, NoCasesNoJudgement) {
  EXPECT_FALSE(judge_straggler({}));
}

}  // namespace
}  // namespace cb
