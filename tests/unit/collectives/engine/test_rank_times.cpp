// Per-rank times of a case: the statistics over ranks, the slowest rank's place, and their JSON.
#include <gtest/gtest.h>

#include "collectives/engine/rank_times.hpp"

namespace cb {
namespace {

std::vector<RankPlace> places(int n) {
  std::vector<RankPlace> out;
  for (int r = 0; r < n; ++r) out.push_back({r, r < 2 ? "node-a" : "node-b", r % 2, std::nullopt});
  return out;
}

TEST(RankTimes, SlowestRankItsPlaceAndTheSpread) {
  RankTimes t = rank_times({10.0, 12.5, 40.0, 11.0}, places(4));
  EXPECT_EQ(t.min_us, 10.0);
  EXPECT_EQ(t.max_us, 40.0);
  EXPECT_EQ(t.median_us, (11.0 + 12.5) / 2);  // even count: the middle two's mean
  EXPECT_EQ(t.slowest_rank, 2);
  EXPECT_EQ(t.slowest_host, "node-b");
  EXPECT_EQ(t.slowest_gpu, 0);
  EXPECT_FALSE(t.slowest_core);
}

TEST(RankTimes, OddCountMedianAndTheLowestOfEquallySlowRanks) {
  RankTimes t = rank_times({7.0, 9.0, 9.0}, places(3));
  EXPECT_EQ(t.median_us, 9.0);
  EXPECT_EQ(t.slowest_rank, 1);
}

TEST(RankTimes, RankOfAProcessIsItsFirstRank) {
  std::vector<RankPlace> p = {{0, "h", std::nullopt, 3}, {2, "h", std::nullopt, 5}};  // 2 GPUs each
  RankTimes t = rank_times({1.0, 2.0}, p);
  EXPECT_EQ(t.slowest_rank, 2);
  EXPECT_EQ(t.slowest_core, 5);
}

TEST(RankTimes, JsonRoundTripAndAbsentForOlderRecords) {
  ResultRecord r;
  r.backend = "mpi";
  r.rank_time = rank_times({10.0, 40.0}, places(2));
  nlohmann::json j = r;
  ASSERT_TRUE(j.contains("rank_time_us"));
  EXPECT_EQ(j["rank_time_us"]["slowest_rank"], 1);
  EXPECT_EQ(j["rank_time_us"]["max"], 40.0);
  EXPECT_TRUE(j["rank_time_us"]["slowest_core"].is_null());
  EXPECT_EQ(ordered_json(r)["rank_time_us"]["slowest_rank"], 1);  // JSONL writes this one
  ResultRecord back = j.get<ResultRecord>();
  EXPECT_EQ(back.rank_time, r.rank_time);
  j.erase("rank_time_us");
  EXPECT_FALSE(j.get<ResultRecord>().rank_time);
  // CSV is unchanged: the field table has no rank_time_us column.
  for (auto name : kResultColumns) EXPECT_NE(name, "rank_time_us");
}

}  // namespace
}  // namespace cb
