#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "collectives/backends/registry.hpp"
#include "report/tune/tune.hpp"
#include "report/tune/tune_text.hpp"

namespace cb {
namespace {

// The nccl backend's tuner file, as `tune --emit-nccl-tuner` reaches it through the registry.
std::string nccl_tuner_file(const std::vector<TuneRange>& ranges) {
  for (const auto& f : tuning_files()) {
    if (f.option == "--emit-nccl-tuner") return f.write(ranges);
  }
  ADD_FAILURE() << "no --emit-nccl-tuner in the registry";
  return {};
}

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

// The margin is 3 combined standard errors of the two means, sqrt(se1^2 + se2^2), each mean's
// own: with cv 0.5 over 100 iterations each mean is known to 5 % of itself, so default (1.0) to
// 0.05 and an 18 % faster ring (0.82) to 0.041; combined 0.0647, 3 of them 19.4 %.
TEST(Tune, TheNoiseMarginIsThreeCombinedStandardErrors) {
  // 18 % faster: 2.78 standard errors, within the noise.
  auto ranges = recommend({rec("default", 64, 1.0, 0.5, 100), rec("ring", 64, 0.82, 0.5, 100)});
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0].algorithm, "default");
  // 23 % faster: ring known to 0.0385, combined 0.0631, 3.64 standard errors, taken.
  ranges = recommend({rec("default", 64, 1.0, 0.5, 100), rec("ring", 64, 0.77, 0.5, 100)});
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0].algorithm, "ring");
  // Only one side noisy: cv 0.5 and 0 combine to 5 %, so 3 of them are 15 %.
  ranges = recommend({rec("default", 64, 1.0, 0.5, 100), rec("ring", 64, 0.86, 0.0, 100)});
  EXPECT_EQ(ranges[0].algorithm, "default");
  ranges = recommend({rec("default", 64, 1.0, 0.5, 100), rec("ring", 64, 0.84, 0.0, 100)});
  EXPECT_EQ(ranges[0].algorithm, "ring");
  // A setting 200 times faster whose own mean is noisy (cv 11, one stall among 1000 calls) is
  // still known far better than the gap: its standard error is 0.35 % of default's time.
  ranges = recommend({rec("default", 64, 30000, 0.02, 5), rec("ring", 64, 140, 11.2, 1000)});
  EXPECT_EQ(ranges[0].algorithm, "ring");
}

TEST(TuneText, OneLinePerCandidateAtEachSizeTheFastestFewAndDefault) {
  std::vector<ResultRecord> rs;
  for (int i = 0; i < 10; ++i) rs.push_back(rec(fmt::format("algo{}", i), 1024, 10.0 + i));
  rs.push_back(rec("default", 1024, 30));
  std::ostringstream out;
  print_candidates(rs, 3, out);
  std::vector<std::string> lines;
  std::istringstream text(out.str());
  for (std::string l; std::getline(text, l);) lines.push_back(l);
  // A heading, the column names, the fastest 3 and the current default.
  ASSERT_EQ(lines.size(), 6u) << out.str();
  EXPECT_NE(lines[0].find("11 candidates per size, the fastest 3"), std::string::npos) << lines[0];
  EXPECT_NE(lines[2].find("algo0"), std::string::npos);
  EXPECT_NE(lines[2].find("3.00x"), std::string::npos) << lines[2];  // 30 us over 10 us
  EXPECT_NE(lines[5].find("default"), std::string::npos);
  for (const auto& l : lines) EXPECT_LT(l.size(), 160u) << l;
}

TEST(Tune, TheAdviceCarriesItsNoiseMargin) {
  // 20 % faster, but each mean's standard error is 10 % (cv 1, 100 iterations): the margin is
  // 3 x sqrt(0.08^2 + 0.1^2) = 38 %, and default is kept.
  auto ranges = recommend({rec("default", 64, 10, 1.0, 100), rec("ring", 64, 8, 1.0, 100)});
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0].algorithm, "default");
  EXPECT_NEAR(ranges[0].margin, 3 * std::hypot(0.08, 0.1), 1e-9);
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

TuneRange range(const std::string& backend, const std::string& collective, const std::string& dtype,
                std::uint64_t min_bytes, std::uint64_t max_bytes, const std::string& algorithm) {
  TuneRange r;
  r.backend = backend;
  r.library = backend == "nccl" ? "NCCL 2.28.9" : "Open MPI 4.1.4";
  r.collective = collective;
  r.dtype = dtype;
  r.op = collective == "allgather" ? "none" : "sum";
  r.placement = "out";
  r.nranks = 16;
  r.nnodes = 2;
  r.min_bytes = min_bytes;
  r.max_bytes = max_bytes;
  r.algorithm = algorithm;
  return r;
}

std::vector<std::string> data_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') out.push_back(line);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// --emit-nccl-tuner: NCCL's example tuner CSV, one line per range where a forced algorithm wins,
// from 0 for the first range to the byte before the next range, the last one open-ended;
// default ranges are left to NCCL, and so are other backends, later dtype groups and
// collectives the tuner cannot steer.
TEST(TuneFiles, NcclTunerConfigHasOneLinePerForcedRange) {
  const std::vector<TuneRange> ranges = {
      range("nccl", "allreduce", "float", 8, 1024, "default"),
      range("nccl", "allreduce", "float", 2048, 65536, "ring/ll128"),
      range("nccl", "allreduce", "float", 131072, 1 << 30, "collnetdirect/simple"),
      range("nccl", "allreduce", "double", 8, 1 << 30, "tree/ll"),
      range("nccl", "allgather", "float", 8, 1 << 30, "nvlstree/simple"),
      range("nccl", "alltoall", "float", 8, 1 << 30, "ring/simple"),
      range("mpi", "allreduce", "float", 8, 1 << 30, "ring"),
  };
  std::string text = nccl_tuner_file(ranges);
  EXPECT_NE(
      text.find("# collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks\n"),
      std::string::npos)
      << text;
  const std::vector<std::string> want = {
      "allgather,0,9223372036854775807,nvls_tree,simple,-1,2,16",
      "allreduce,131072,9223372036854775807,collnet_direct,simple,-1,2,16",
      "allreduce,2048,131071,ring,ll128,-1,2,16",
  };
  EXPECT_EQ(data_lines(text), want) << text;
  // Nothing forced: a header only.
  EXPECT_TRUE(data_lines(nccl_tuner_file({ranges[0]})).empty());
}

}  // namespace
}  // namespace cb
