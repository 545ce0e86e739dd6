// Statistics behind compare's verdict over repetitions, against values worked out by hand, and
// the summary of repeated launches.
#include <gtest/gtest.h>

#include <cmath>
#include <utility>

#include "report/compare.hpp"
#include "report/repetitions.hpp"
#include "report/significance.hpp"

namespace cb {
namespace {

TEST(Significance, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(median_of({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median_of({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median_of({}), 0);
}

TEST(Significance, StddevIsTheSampleOne) {
  // mean 5, squared deviations 9+1+1+9 = 20, / (n-1) = 20/3.
  EXPECT_NEAR(stddev_of({2, 4, 6, 8}), std::sqrt(20.0 / 3), 1e-12);
  EXPECT_DOUBLE_EQ(stddev_of({7}), 0);
}

TEST(Significance, MannWhitneyCompleteSeparationIsOneArrangement) {
  // 3 vs 3 with every y above every x: U = 9, one of C(6,3) = 20 orderings.
  EXPECT_NEAR(mann_whitney_greater({1, 2, 3}, {4, 5, 6}), 1.0 / 20, 1e-12);
  // 5 vs 5: 1 of C(10,5) = 252.
  EXPECT_NEAR(mann_whitney_greater({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}), 1.0 / 252, 1e-12);
  // The other direction: every arrangement has U >= 0.
  EXPECT_NEAR(mann_whitney_greater({4, 5, 6}, {1, 2, 3}), 1.0, 1e-12);
  EXPECT_NEAR(mann_whitney_min_p(5, 5), 1.0 / 252, 1e-15);
}

TEST(Significance, MannWhitneyInterleavedByHand) {
  // x = {1,3,5}, y = {2,4,6}: pairs with y > x: 2>1; 4>1,3; 6>1,3,5 -> U = 6. The counts of U
  // over the 20 orderings of 3 and 3 are 1,1,2,3,3,3,3,2,1,1 for U = 0..9, so
  // P(U >= 6) = (3+2+1+1)/20 = 7/20.
  EXPECT_NEAR(mann_whitney_greater({1, 3, 5}, {2, 4, 6}), 7.0 / 20, 1e-12);
}

TEST(Significance, MannWhitneyWithTiesUsesTheNormalApproximation) {
  // x = {1,1,2}, y = {2,3,3}: U = 3 + 3 + 2.5 = 8.5 of 9; mean 4.5. Ties: {1,1} and {2,2} and
  // {3,3}, each t^3 - t = 6, sum 18; var = 9/12 * (7 - 18/30) = 4.8; z = (8.5 - 4.5 - 0.5) /
  // sqrt(4.8) = 1.5975...; p = 1 - Phi(z) = 0.0550745...
  EXPECT_NEAR(mann_whitney_greater({1, 1, 2}, {2, 3, 3}), 0.0550745, 1e-6);
}

TEST(Significance, BenjaminiHochbergByHand) {
  // p sorted: 0.005 (rank 1), 0.01 (2), 0.03 (3), 0.04 (4); m = 4. Raw p*m/rank: 0.02, 0.02,
  // 0.04, 0.04; running minimum from the top keeps them.
  auto q = benjamini_hochberg({0.01, 0.04, 0.03, 0.005});
  ASSERT_EQ(q.size(), 4u);
  EXPECT_NEAR(q[0], 0.02, 1e-12);
  EXPECT_NEAR(q[1], 0.04, 1e-12);
  EXPECT_NEAR(q[2], 0.04, 1e-12);
  EXPECT_NEAR(q[3], 0.02, 1e-12);
}

TEST(Significance, BenjaminiHochbergIsMonotoneAndCapped) {
  // p = {0.5, 0.02}: ranks 2 and 1 -> 0.5*2/2 = 0.5, 0.02*2/1 = 0.04.
  auto q = benjamini_hochberg({0.5, 0.02});
  EXPECT_NEAR(q[0], 0.5, 1e-12);
  EXPECT_NEAR(q[1], 0.04, 1e-12);
  // A later larger raw value cannot lower an earlier one's: p = {0.04, 0.045}, m = 2:
  // 0.04*2/1 = 0.08 but 0.045*2/2 = 0.045 is smaller and caps it.
  auto q2 = benjamini_hochberg({0.04, 0.045});
  EXPECT_NEAR(q2[0], 0.045, 1e-12);
  EXPECT_NEAR(q2[1], 0.045, 1e-12);
  EXPECT_TRUE(benjamini_hochberg({}).empty());
}

ResultRecord launch(int repeat, double time_us, double busbw) {
  ResultRecord r;
  r.backend = "mpi";
  r.algorithm = "default";
  r.collective = "allreduce";
  r.dtype = "float";
  r.op = "sum";
  r.placement = "out";
  r.nranks = 2;
  r.bytes = 1 << 20;
  r.iters = 100 + static_cast<std::uint64_t>(repeat);
  r.time_us = time_us;
  r.p50_us = time_us;
  r.busbw_GBps = busbw;
  r.wrong = repeat == 1 ? 2 : 0;
  r.repeat = repeat;
  return r;
}

TEST(Repetitions, SummaryHoldsMediansAndKeepsEveryRepetition) {
  std::vector<ResultRecord> launches = {launch(0, 10, 3), launch(1, 30, 1), launch(2, 20, 2)};
  ResultRecord s = summarize_repetitions(launches);
  EXPECT_DOUBLE_EQ(s.time_us, 20);
  EXPECT_DOUBLE_EQ(s.p50_us, 20);
  EXPECT_DOUBLE_EQ(*s.busbw_GBps, 2);
  EXPECT_EQ(s.iters, 101u);
  EXPECT_EQ(*s.wrong, 2u);  // summed: a wrong element in any repetition shows
  EXPECT_FALSE(s.repeat.has_value());
  ASSERT_EQ(s.repeats.size(), 3u);
  EXPECT_EQ(*s.repeats[1].repeat, 1);
  EXPECT_EQ(launches_of(s).size(), 3u);
}

TEST(Repetitions, SummaryRoundTripsThroughJson) {
  ResultRecord s = summarize_repetitions({launch(0, 10, 3), launch(1, 30, 1)});
  nlohmann::ordered_json j = ordered_json(s);
  EXPECT_EQ(j["repetitions"], 2);
  ResultRecord back = nlohmann::json::parse(j.dump()).get<ResultRecord>();
  ASSERT_EQ(back.repeats.size(), 2u);
  EXPECT_DOUBLE_EQ(back.repeats[1].time_us, 30);
  EXPECT_EQ(back.repeats[1].collective, "allreduce");
  EXPECT_DOUBLE_EQ(back.time_us, 20);
}

TEST(Repetitions, DifferentMeasurementsStaySeparate) {
  ResultRecord other = launch(0, 5, 9);
  other.bytes = 8;
  auto all = summarize_all({launch(0, 10, 3), other, launch(1, 30, 1)});
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].repeats.size(), 2u);
  EXPECT_EQ(all[1].repeats.size(), 1u);
}

}  // namespace
}  // namespace cb

namespace cb {
namespace {

// A result file whose records (1 MiB, 1 MiB + 4 KiB, ...) summarise the given busbw values.
ResultFile repeated(const std::vector<std::vector<double>>& busbw_per_size) {
  ResultFile f;
  f.path = "x.json";
  f.format = "json";
  for (std::size_t i = 0; i < busbw_per_size.size(); ++i) {
    std::vector<ResultRecord> launches;
    int k = 0;
    for (double bw : busbw_per_size[i]) {
      ResultRecord r = launch(k++, 100 / bw, bw);
      r.bytes = (std::uint64_t{1} << 20) + i * 4096;
      r.p99_us = r.p50_us;
      r.wrong = 0;
      launches.push_back(r);
    }
    f.records.push_back(summarize_repetitions(launches));
  }
  return f;
}

// Five launches' busbw of a steady record, and the same record after a 30 % drop: every
// dropped launch below every steady one (U test p = 1/252).
const std::vector<double> kSteady = {10, 10.2, 9.9, 10.1, 10.3};
const std::vector<double> kDropped = {7, 7.2, 6.9, 7.1, 7.3};

// `n` steady records on both sides, except that the first `dropped` dropped on the new side.
std::pair<ResultFile, ResultFile> with_drops(std::size_t n, std::size_t dropped) {
  std::vector<std::vector<double>> base(n, kSteady), next(n, kSteady);
  for (std::size_t i = 0; i < dropped; ++i) next[i] = kDropped;
  return {repeated(base), repeated(next)};
}

TEST(CompareRepetitions, ConsistentDropIsASignificantRegression) {
  std::vector<std::vector<double>> base(8, kSteady);
  std::vector<std::vector<double>> next(8, kDropped);
  CompareReport r = compare_results(repeated(base), repeated(next), CompareOptions{});
  ASSERT_EQ(r.rows.size(), 8u);
  for (const auto& c : r.rows) {
    EXPECT_EQ(c.method, Method::UTest);
    EXPECT_EQ(c.base.runs, 5);
    EXPECT_NEAR(c.p_value, 1.0 / 252, 1e-12);
    // Every record has the smallest p: BH keeps each at 8 * p / 8.
    EXPECT_NEAR(c.q_value, 1.0 / 252, 1e-12);
    EXPECT_NEAR(c.change, 7.1 / 10.1 - 1, 1e-12);
    EXPECT_EQ(c.verdict, Verdict::Regression);
  }
  // Sizes in the middle have both neighbours moving the same way; the ends one.
  EXPECT_EQ(r.rows.front().support, 1);
  EXPECT_EQ(r.rows[3].support, 2);
  EXPECT_EQ(r.ordered().front()->support, 2);
}

TEST(CompareRepetitions, OneSlowLaunchIsNotARegression) {
  // One launch of five twice as slow on the new side (a bimodal machine): the median barely
  // moves and the ranks do not separate.
  std::vector<std::vector<double>> base(8, kSteady);
  std::vector<std::vector<double>> next(8, {10.05, 5, 9.95, 10.15, 10.25});
  CompareReport r = compare_results(repeated(base), repeated(next), CompareOptions{});
  EXPECT_EQ(r.count(Verdict::Regression), 0);
}

TEST(CompareRepetitions, SmallFamilyIsCorrectedForTheNumberOfRecords) {
  // One record alone at p = 1/252 is significant; the same record among 99 unchanged ones is
  // not: BH multiplies it by 100.
  auto [base, next] = with_drops(100, 1);
  CompareReport many = compare_results(base, next, CompareOptions{});
  EXPECT_EQ(many.count(Verdict::Regression), 0);
  EXPECT_EQ(many.count(Verdict::Noise), 1);
  auto [base_alone, next_alone] = with_drops(1, 1);
  CompareReport alone = compare_results(base_alone, next_alone, CompareOptions{});
  EXPECT_EQ(alone.count(Verdict::Regression), 1);
}

TEST(CompareRepetitions, SaysHowManyRecordsMustMoveTogether) {
  // 20 records, 5 vs 5: the smallest p is 1/252, and BH rejects it only when
  // ceil(20 / 252 / 0.05) = 2 records reach it together. So one record that moved alone is
  // not found, and the warning says so; 6 repetitions (1/924 <= 0.05 / 20) would find it.
  auto [base, next] = with_drops(20, 1);
  CompareReport r = compare_results(base, next, CompareOptions{});
  EXPECT_EQ(r.count(Verdict::Regression), 0);
  ASSERT_FALSE(r.warnings.empty());
  const std::string& w = r.warnings.back();
  EXPECT_NE(w.find("at least 2 records move together"), std::string::npos) << w;
  EXPECT_NE(w.find("--repeat 6 on both sides"), std::string::npos) << w;
  // Two records that moved together are found.
  auto [base_two, next_two] = with_drops(20, 2);
  CompareReport two = compare_results(base_two, next_two, CompareOptions{});
  EXPECT_EQ(two.count(Verdict::Regression), 2);
}

TEST(CompareRepetitions, NoSuchWarningWhereOneRecordCanBeFound) {
  // 10 records: ceil(10 / 252 / 0.05) = 1.
  auto [base, next] = with_drops(10, 1);
  CompareReport r = compare_results(base, next, CompareOptions{});
  EXPECT_EQ(r.count(Verdict::Regression), 1);
  for (const auto& w : r.warnings) EXPECT_EQ(w.find("move together"), std::string::npos) << w;
}

TEST(CompareRepetitions, OneRepetitionFallsBackWithAWarning) {
  std::vector<std::vector<double>> base(2, {10});
  std::vector<std::vector<double>> next(2, {7});
  CompareReport r = compare_results(repeated(base), repeated(next), CompareOptions{});
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.rows[0].method, Method::NoiseBand);
  EXPECT_EQ(r.rows[0].verdict, Verdict::Regression);  // today's rule: no spread, p50 agrees
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_NE(r.warnings.back().find("no significance can be judged"), std::string::npos);
  EXPECT_NE(r.warnings.back().find("--repeat"), std::string::npos);
}

TEST(CompareRepetitions, HistoryOfFilesIsPooled) {
  // Five single-launch base files against one new file with five repetitions.
  std::vector<ResultFile> history;
  for (double bw : {10.0, 10.2, 9.9, 10.1, 10.3}) history.push_back(repeated({{bw}}));
  CompareReport r = compare_results(history, repeated({{7, 7.2, 6.9, 7.1, 7.3}}), CompareOptions{});
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0].base.runs, 5);
  EXPECT_EQ(r.rows[0].method, Method::UTest);
  EXPECT_EQ(r.rows[0].verdict, Verdict::Regression);
}

TEST(CompareRepetitions, TooFewRepetitionsAreSaid) {
  CompareReport r = compare_results(repeated({{10, 10.1}}), repeated({{7, 7.1}}), CompareOptions{});
  EXPECT_EQ(r.rows[0].verdict, Verdict::Noise);  // 2 vs 2: the smallest p is 1/6
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_NE(r.warnings.back().find("too few repetitions"), std::string::npos);
}

}  // namespace
}  // namespace cb
