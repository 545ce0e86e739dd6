#include <gtest/gtest.h>

#include "report/tune.hpp"

namespace cb {
namespace {

ResultRecord rec(const std::string& algo, std::uint64_t bytes, double time_us, double cv = 0.01,
                 std::uint64_t iters = 1000, std::optional<std::uint64_t> wrong = 0) {
  ResultRecord r;
  r.backend = "mpi";
  r.library = "Open MPI 4.1.4";
  r.algorithm = algo;
  r.collective = "allreduce";
  r.dtype = "float";
  r.op = "sum";
  r.placement = "out";
  r.nranks = 4;
  r.nnodes = 1;
  r.bytes = bytes;
  r.iters = iters;
  r.time_us = time_us;
  r.cv = cv;
  r.wrong = wrong;
  return r;
}

TEST(Tune, PicksTheFastestPerSizeAndMergesRanges) {
  std::vector<ResultRecord> rs = {
      rec("default", 8, 1.0),   rec("ring", 8, 2.0),   rec("recursive_doubling", 8, 0.5),
      rec("default", 16, 1.0),  rec("ring", 16, 2.0),  rec("recursive_doubling", 16, 0.8),
      rec("default", 1024, 10), rec("ring", 1024, 5),  rec("recursive_doubling", 1024, 9),
      rec("default", 4096, 40), rec("ring", 4096, 20), rec("recursive_doubling", 4096, 30),
  };
  auto ranges = recommend(rs);
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_EQ(ranges[0].algorithm, "recursive_doubling");
  EXPECT_EQ(ranges[0].min_bytes, 8u);
  EXPECT_EQ(ranges[0].max_bytes, 16u);
  EXPECT_EQ(ranges[0].sizes, 2);
  EXPECT_NEAR(ranges[0].speedup, std::sqrt(2.0 * 1.25), 1e-9);  // geometric mean of 2 and 1.25
  EXPECT_EQ(ranges[1].algorithm, "ring");
  EXPECT_EQ(ranges[1].min_bytes, 1024u);
  EXPECT_EQ(ranges[1].max_bytes, 4096u);
  EXPECT_NEAR(ranges[1].speedup, 2.0, 1e-9);
}

TEST(Tune, KeepsDefaultWhenTheGainIsWithinNoise) {
  // 5 % faster, but each mean is only known to 0.5/sqrt(100) = 5 %: not significant.
  auto ranges = recommend({rec("default", 64, 1.0, 0.5, 100), rec("ring", 64, 0.95, 0.5, 100)});
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0].algorithm, "default");
  // The same gain measured precisely is taken.
  ranges = recommend({rec("default", 64, 1.0, 0.01, 10000), rec("ring", 64, 0.95, 0.01, 10000)});
  EXPECT_EQ(ranges[0].algorithm, "ring");
  // A 1 % gain is below the minimum however precise.
  ranges = recommend({rec("default", 64, 1.0, 0.0, 10000), rec("ring", 64, 0.99, 0.0, 10000)});
  EXPECT_EQ(ranges[0].algorithm, "default");
}

TEST(Tune, NeverRecommendsAnAlgorithmThatGaveWrongResults) {
  auto ranges = recommend({rec("default", 64, 1.0), rec("ring", 64, 0.1, 0.01, 1000, 3)});
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0].algorithm, "default");
}

TEST(Tune, NcclDefaultLabelsCountAsDefault) {
  EXPECT_TRUE(is_default_algorithm("default (RING/SIMPLE, 32 ch)"));
  EXPECT_FALSE(is_default_algorithm("ring/ll128"));
  auto ranges = recommend({rec("default (RING/LL, 2 ch)", 64, 1.0), rec("tree/ll", 64, 2.0)});
  EXPECT_EQ(ranges[0].algorithm, "default");
}

TEST(Tune, SeparateGroupsPerCollectiveAndDtype) {
  auto a = rec("default", 64, 1.0);
  auto b = rec("default", 64, 1.0);
  b.dtype = "double";
  auto ranges = recommend({a, b});
  EXPECT_EQ(ranges.size(), 2u);
}

}  // namespace
}  // namespace cb
