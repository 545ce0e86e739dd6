// The launch statistics behind compare's and check's verdicts (Welch's interval on log figures,
// the effect floor, the shape and level values, the control gate, history thresholds), against
// values worked out by hand; compare's shape and level tests on crafted launches; and the
// summary of repeated launches.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <utility>

#include "report/compare/compare.hpp"
#include "report/launch_statistics.hpp"
#include "report/repetitions.hpp"
#include "report_fixtures.hpp"

namespace cb {
namespace {

TEST(LaunchStatistics, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(median_of({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median_of({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median_of({}), 0);
}

TEST(LaunchStatistics, StddevIsTheSampleOne) {
  // mean 5, squared deviations 9+1+1+9 = 20, / (n-1) = 20/3.
  EXPECT_NEAR(stddev_of({2, 4, 6, 8}), std::sqrt(20.0 / 3), 1e-12);
  EXPECT_DOUBLE_EQ(stddev_of({7}), 0);
}

TEST(LaunchStatistics, StudentTAgainstTables) {
  EXPECT_NEAR(student_t_cdf(0, 4), 0.5, 1e-12);
  // t(1) is the Cauchy distribution: P(T <= 1) = 3/4.
  EXPECT_NEAR(student_t_cdf(1, 1), 0.75, 1e-10);
  // Printed tables: t(0.975; 4) = 2.776445, t(0.995; 10) = 3.169273, t(0.975; 1) = 12.706205.
  EXPECT_NEAR(student_t_quantile(0.975, 4), 2.776445, 1e-5);
  EXPECT_NEAR(student_t_quantile(0.995, 10), 3.169273, 1e-5);
  EXPECT_NEAR(student_t_quantile(0.975, 1), 12.706205, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.025, 4), -2.776445, 1e-5);
  // Many degrees of freedom: the normal's 1.959964.
  EXPECT_NEAR(student_t_quantile(0.975, 1e6), 1.959964, 1e-5);
}

TEST(LaunchStatistics, WelchIntervalByHand) {
  // {1,2,3} v {4,5,6}: variances 1, so each mean's is 1/3; se = sqrt(2/3) = 0.816497;
  // df = (2/3)^2 / ((1/3)^2/2 * 2) = 4; t(0.975; 4) = 2.776445; 3 +- 2.266958.
  WelchInterval w = welch_interval({1, 2, 3}, {4, 5, 6}, 0.95);
  EXPECT_NEAR(w.difference, 3, 1e-12);
  EXPECT_NEAR(w.se, std::sqrt(2.0 / 3), 1e-12);
  EXPECT_NEAR(w.df, 4, 1e-12);
  EXPECT_NEAR(w.low, 3 - 2.776445 * std::sqrt(2.0 / 3), 1e-5);
  EXPECT_NEAR(w.high, 3 + 2.776445 * std::sqrt(2.0 / 3), 1e-5);
  // Unequal variances: {0,0,2,2} (var 4/3, /4 = 1/3) v {1,3} (var 2, /2 = 1):
  // df = (4/3)^2 / ((1/3)^2/3 + 1^2/1) = (16/9) / (1/27 + 1) = 1.714286.
  WelchInterval u = welch_interval({0, 0, 2, 2}, {1, 3}, 0.95);
  EXPECT_NEAR(u.df, (16.0 / 9) / (1.0 / 27 + 1), 1e-12);
}

// Five launches' logs around `centre`, sd 0.1 (deviations -0.1, -0.1, 0, 0.1, 0.1 -> var 0.01).
std::vector<double> logs_around(double centre) {
  return {centre - 0.1, centre - 0.1, centre, centre + 0.1, centre + 0.1};
}

TEST(LaunchStatistics, EffectFloorAndConfidenceBoundByHand) {
  // 3x slower: difference log 3, se = sqrt(2 * 0.01 / 5) = 0.063246, df = 8,
  // t(0.995; 8) = 3.355387: bounds exp(log 3 -+ 0.212215) = 2.4270 .. 3.7083.
  RatioVerdict v = judge_log_launches(logs_around(0), logs_around(std::log(3)), {});
  EXPECT_EQ(v.change, Change::Slower);
  EXPECT_NEAR(v.ratio, 3, 1e-9);
  EXPECT_NEAR(v.low, 3 * std::exp(-3.355387 * std::sqrt(0.004)), 1e-4);
  EXPECT_NEAR(v.high, 3 * std::exp(3.355387 * std::sqrt(0.004)), 1e-4);
  EXPECT_EQ(v.reference_launches, 5);
  // 1.3x: significant (lower bound 1.3 x 0.8088 = 1.0515 > 1) but not beyond the 1.25x floor.
  RatioVerdict small = judge_log_launches(logs_around(0), logs_around(std::log(1.3)), {});
  EXPECT_EQ(small.change, Change::Same);
  EXPECT_NEAR(small.low, 1.3 * std::exp(-3.355387 * std::sqrt(0.004)), 1e-4);
  // The same with a 1.05x floor is slower.
  EXPECT_EQ(judge_log_launches(logs_around(0), logs_around(std::log(1.3)), {1.05, 0.99, 1}).change,
            Change::Slower);
  // Faster: the upper bound below 1 / floor.
  EXPECT_EQ(judge_log_launches(logs_around(0), logs_around(-std::log(3)), {}).change,
            Change::Faster);
}

TEST(LaunchStatistics, FamilyWidensEachBound) {
  // 28 records at 99 % family-wise: each at 1 - 0.01/28, t(1 - 0.01/56; 8) = 6.1184 (vs 3.3554).
  RatioVerdict one = judge_log_launches(logs_around(0), logs_around(std::log(2)), {});
  RatioVerdict many = judge_log_launches(logs_around(0), logs_around(std::log(2)), {1.25, 0.99, 28});
  EXPECT_LT(many.low, one.low);
  EXPECT_NEAR(std::log(2 / many.low) / std::sqrt(0.004), student_t_quantile(1 - 0.01 / 56, 8),
              1e-6);
}

TEST(LaunchStatistics, TooFewLaunchesAreInconclusive) {
  RatioVerdict v = judge_log_launches({0}, logs_around(5), {});
  EXPECT_EQ(v.change, Change::Inconclusive);
  EXPECT_NE(v.why.find("1 v 5 launches"), std::string::npos) << v.why;
  EXPECT_EQ(judge_launches({1, 2}, {0, 3}, {}).change, Change::Inconclusive);  // a zero figure
  // judge_launches takes the logs itself: 10 and 30 us per launch.
  RatioVerdict t = judge_launches({10, 10.5, 9.5}, {30, 31.5, 28.5}, {});
  EXPECT_NEAR(t.ratio, 3, 1e-9);
}

TEST(LaunchStatistics, ShapeTakesOutTheLaunchMedianAndLevelIsTheMeanLog) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  LogTable t = {{0, 1, 5}, {2, 3, 7}, {1, nan, 3}};
  LogTable s = shape_of(t);
  EXPECT_EQ(s[0], (std::vector<double>{-1, 0, 4}));
  EXPECT_EQ(s[1], (std::vector<double>{-1, 0, 4}));  // a launch 2 slower in log: same shape
  EXPECT_DOUBLE_EQ(s[2][0], -1);                    // median of {1, 3} is 2
  EXPECT_TRUE(std::isnan(s[2][1]));
  std::vector<double> l = level_of(t);
  EXPECT_DOUBLE_EQ(l[0], 2);
  EXPECT_DOUBLE_EQ(l[1], 4);
  EXPECT_TRUE(std::isnan(l[2]));
}

std::vector<ControlFigures> controls(const std::vector<double>& pingpong, double compute = 10) {
  std::vector<ControlFigures> out;
  for (double p : pingpong) out.push_back({p, compute});
  return out;
}

TEST(ControlGate, KeepsTheLaunchesInOneMode) {
  // Base 100, 105, 98, 300, 310 ns; new 100, 101, 99, 300, 102: within 1.5x of 98 are base
  // 0, 1, 2 and new 0, 1, 2, 4.
  ControlMatch m = match_control(controls({100, 105, 98, 300, 310}),
                                 controls({100, 101, 99, 300, 102}), 1.5, 1.25);
  EXPECT_TRUE(m.matched);
  EXPECT_EQ(m.reference, (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(m.candidate, (std::vector<std::size_t>{0, 1, 2, 4}));
  EXPECT_TRUE(m.why.empty());
}

TEST(ControlGate, SaysWhenTheSidesDisagree) {
  // New mostly slow: the best band has 2 a side (300-310 v 300, 290, 305, 310 ... base only 2).
  ControlMatch m = match_control(controls({100, 105, 98, 300, 310}),
                                 controls({300, 290, 305, 100, 310}), 1.5, 1.25);
  EXPECT_FALSE(m.matched);
  // The base median is 105; 4 of the 5 new launches are beyond 1.5x of it, their median
  // 300 ns: 300 / 105 = 2.857.
  EXPECT_NE(m.why.find("new side's control 2.9x slower in 4 of 5 launches"), std::string::npos)
      << m.why;
  EXPECT_NE(m.why.find("need 3 launches a side"), std::string::npos) << m.why;
  EXPECT_NE(m.why.find("rerun"), std::string::npos) << m.why;
}

TEST(ControlGate, ComputeLoopCountsToo) {
  // Same round trips, compute 1.3x slower on the new side (tolerance 1.25x).
  ControlMatch m =
      match_control(controls({100, 100, 100}), controls({100, 100, 100}, 13), 1.5, 1.25);
  EXPECT_FALSE(m.matched);
  EXPECT_NE(m.why.find("compute loop 13 us against 10 us"), std::string::npos) << m.why;
  EXPECT_TRUE(
      match_control(controls({100, 100, 100}), controls({100, 100, 100}, 12), 1.5, 1.25).matched);
}

TEST(HistoryThreshold, QuartilesOfTheNightToNightChanges) {
  // Ten nights alternating 0 and 0.1: nine changes of 0.1, IQR 0: exp(0.1).
  std::vector<double> nights = {0, 0.1, 0, 0.1, 0, 0.1, 0, 0.1, 0, 0.1};
  EXPECT_NEAR(history_threshold(nights), std::exp(0.1), 1e-12);
  nights.pop_back();
  EXPECT_DOUBLE_EQ(history_threshold(nights), 0);  // nine nights: no history threshold
  // Changes 0, 0.1, 0.2, ..., 0.9 (eleven nights): Q1 = 0.225, Q3 = 0.675 (type 7),
  // threshold exp(0.675 + 3 x 0.45) = exp(2.025).
  std::vector<double> ramp = {0};
  for (int i = 0; i < 10; ++i) ramp.push_back(ramp.back() + 0.1 * i);
  EXPECT_NEAR(history_threshold(ramp), std::exp(2.025), 1e-9);
}

ResultRecord launch(int repeat, double time_us, double busbw) {
  ResultRecord r = test::mpi_allreduce_record(1 << 20);
  r.iters = 100 + static_cast<std::uint64_t>(repeat);
  r.time_us = time_us;
  r.p50_us = time_us;
  r.busbw_GBps = busbw;
  r.wrong = repeat == 1 ? 2 : 0;
  r.repeat = repeat;
  return r;
}


// A result file of `per_launch_us[record][launch]` p50 times (records 1 MiB, 2 MiB, ... of one
// series), each launch with the given control round trip (0: none recorded).
ResultFile launches_file(const std::vector<std::vector<double>>& per_launch_us,
                         const std::vector<double>& pingpong = {}) {
  ResultFile f;
  f.path = "x.json";
  f.format = "json";
  for (std::size_t i = 0; i < per_launch_us.size(); ++i) {
    std::vector<ResultRecord> launches;
    int k = 0;
    for (double us : per_launch_us[i]) {
      ResultRecord r = launch(k++, us, 100 / us);
      r.bytes = std::uint64_t{1} << (20 + i);
      r.p99_us = r.p50_us;
      r.wrong = 0;
      launches.push_back(r);
    }
    f.records.push_back(summarize_repetitions(launches));
  }
  if (!pingpong.empty()) {
    RunMeta m;
    for (std::size_t l = 0; l < pingpong.size(); ++l) {
      LaunchControl c;
      c.repeat = static_cast<int>(l);
      c.samples = {{"start", pingpong[l], 300}, {"middle", pingpong[l], 300},
                   {"end", pingpong[l], 300}};
      m.launches.push_back(c);
    }
    f.meta = m;
    f.meta_json = nlohmann::json(m);
  }
  return f;
}

// Launch factors: how much slower each launch runs as a whole (a machine mode).
std::vector<std::vector<double>> records(std::size_t n, const std::vector<double>& launch_factor,
                                         double base_us = 100) {
  std::vector<std::vector<double>> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t l = 0; l < launch_factor.size(); ++l) {
      // A little launch-to-launch noise that differs by record: +-2 %.
      const double wiggle = 1 + 0.02 * (static_cast<double>((i + l) % 3) - 1.0);
      // Records 1 % apart, so that one record moving past the others shifts its launch's
      // median by half a percent only.
      out[i].push_back(base_us * (1 + 0.01 * static_cast<double>(i)) * launch_factor[l] *
                       wiggle);
    }
  }
  return out;
}

const std::vector<double> kFast = {1, 1, 1, 1, 1};
const std::vector<double> kSteadyControl = {100, 102, 98, 101, 99};

TEST(CompareShape, OneRecordThreeTimesSlowerIsNamedAndNothingElse) {
  auto base = records(8, kFast), next = records(8, kFast);
  for (auto& v : next[2]) v *= 3;
  CompareReport r = compare_results(launches_file(base, kSteadyControl),
                                    launches_file(next, kSteadyControl), CompareOptions{});
  ASSERT_EQ(r.rows.size(), 8u);
  EXPECT_EQ(r.count(Verdict::Regression), 1);
  EXPECT_EQ(r.rows[2].verdict, Verdict::Regression);
  EXPECT_EQ(r.rows[2].method, Method::Shape);
  EXPECT_NEAR(r.rows[2].ratio, 3, 0.1);
  EXPECT_GT(r.rows[2].ratio_low, 1.25);
  EXPECT_EQ(r.outcome, CompareOutcome::Regression);
  EXPECT_EQ(r.headline.rfind("REGRESSION allreduce 4 MiB 3.0\u00d7 slower (99 % CI ", 0), 0u)
      << r.headline;
  EXPECT_NE(r.headline.find("floor 1.25\u00d7; 5 v 5 launches)"), std::string::npos) << r.headline;
}

TEST(CompareShape, AWholeLaunchInTheSlowModeCancels) {
  // Two of the new side's launches twice as slow on every record, control too: no record's
  // shape moves, and the level test compares the three launches whose control agrees.
  auto base = records(8, kFast), next = records(8, {1, 2, 1, 2, 1});
  CompareReport r = compare_results(launches_file(base, kSteadyControl),
                                    launches_file(next, {100, 200, 99, 210, 101}), CompareOptions{});
  EXPECT_EQ(r.count(Verdict::Regression), 0);
  EXPECT_EQ(r.outcome, CompareOutcome::Ok) << r.headline;
  EXPECT_TRUE(r.level.matched);
  EXPECT_EQ(r.level.verdict.candidate_launches, 3);
  EXPECT_EQ(r.headline.rfind("OK worst ", 0), 0u) << r.headline;
}

TEST(CompareShape, BelowTheFloorIsNotARegression) {
  // 1.15x on one record, very steady: significant, but within the 1.25x floor.
  auto base = records(8, kFast), next = records(8, kFast);
  for (auto& v : next[2]) v *= 1.15;
  CompareReport r = compare_results(launches_file(base, kSteadyControl),
                                    launches_file(next, kSteadyControl), CompareOptions{});
  EXPECT_EQ(r.count(Verdict::Regression), 0);
  CompareOptions low;
  low.threshold = 0.05;
  EXPECT_EQ(compare_results(launches_file(base, kSteadyControl), launches_file(next, kSteadyControl),
                            low)
                .count(Verdict::Regression),
            1);
}

TEST(CompareLevel, EveryRecordSlowerWithTheControlSteadyIsARegression) {
  auto base = records(8, kFast), next = records(8, {1.2, 1.2, 1.2, 1.2, 1.2});
  CompareReport r = compare_results(launches_file(base, kSteadyControl),
                                    launches_file(next, kSteadyControl), CompareOptions{});
  EXPECT_EQ(r.count(Verdict::Regression), 0);  // the shape did not move
  EXPECT_EQ(r.level.verdict.change, Change::Slower);
  EXPECT_NEAR(r.level.verdict.ratio, 1.2, 0.01);
  EXPECT_EQ(r.outcome, CompareOutcome::Regression);
  EXPECT_EQ(r.headline.rfind("REGRESSION every record 1.20\u00d7 slower (level", 0), 0u)
      << r.headline;
}

TEST(CompareLevel, ControlThatMovedWithTheFiguresIsInconclusive) {
  // Every new launch 2x slower, and so is its control: the machine, not the build.
  auto base = records(8, kFast), next = records(8, {2, 2, 2, 2, 2});
  CompareReport r = compare_results(launches_file(base, kSteadyControl),
                                    launches_file(next, {200, 204, 196, 202, 198}),
                                    CompareOptions{});
  EXPECT_EQ(r.count(Verdict::Regression), 0);
  EXPECT_FALSE(r.level.matched);
  EXPECT_EQ(r.outcome, CompareOutcome::Inconclusive);
  EXPECT_EQ(r.headline.rfind("INCONCLUSIVE new side's control 2.0x slower in 5 of 5 launches", 0),
            0u)
      << r.headline;
}

TEST(CompareLevel, WithoutControlTheLevelIsUngatedAndSaysSo) {
  auto base = records(4, kFast), next = records(4, {1.2, 1.2, 1.2, 1.2, 1.2});
  CompareReport r = compare_results(launches_file(base), launches_file(next), CompareOptions{});
  EXPECT_FALSE(r.level.gated);
  EXPECT_EQ(r.outcome, CompareOutcome::Regression);
  bool said = false;
  for (const auto& n : r.notes) said = said || n.find("no control measurement") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(CompareHistory, TenNightsGiveEachRecordItsOwnFloor) {
  // Twelve nights, each a file of 2 launches of 7 records; record 0 steady, record 1 swinging
  // 1.3x up and down night to night (every change log 1.69: its floor is 1.69x). A 1.4x change
  // at record 0 is beyond its own floor (1.05x: it never moved) even with --threshold 50; at
  // record 1 it is within its swing. The launch median (the 4th record) never moves.
  std::vector<ResultFile> nights;
  for (int n = 0; n < 12; ++n) {
    const double swing = n % 2 ? 1.3 : 1 / 1.3;
    std::vector<std::vector<double>> recs = {{100, 101}, {200 * swing, 201 * swing},
                                             {300, 302}, {400, 398}, {500, 500}, {600, 600},
                                             {700, 700}};
    nights.push_back(launches_file(recs, {100, 100}));
  }
  std::vector<std::vector<double>> next = {{140, 141, 139}, {280, 281, 279}, {300, 302, 301},
                                           {400, 398, 399}, {500, 501, 499}, {600, 600, 600},
                                           {700, 700, 700}};
  CompareOptions o;
  o.threshold = 0.5;
  CompareReport r = compare_results(nights, launches_file(next, {100, 100, 100}), o);
  ASSERT_EQ(r.rows.size(), 7u);
  EXPECT_NEAR(r.rows[1].floor, 1.69, 0.01);
  EXPECT_TRUE(r.rows[0].floor_from_history);
  EXPECT_LT(r.rows[0].floor, 1.4);
  EXPECT_GT(r.rows[1].floor, 1.4);
  EXPECT_EQ(r.rows[0].verdict, Verdict::Regression);
  EXPECT_NE(r.rows[1].verdict, Verdict::Regression);
  EXPECT_NE(r.headline.find("from its nights"), std::string::npos) << r.headline;
}

TEST(CompareNoiseBand, OneLaunchASideFallsBackWithAWarning) {
  CompareReport r =
      compare_results(launches_file({{10}, {20}}), launches_file({{30}, {60}}), CompareOptions{});
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.rows[0].method, Method::NoiseBand);
  EXPECT_EQ(r.rows[0].verdict, Verdict::Regression);
  EXPECT_FALSE(r.level.judged);
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_NE(r.warnings.back().find("one launch on a side"), std::string::npos);
  EXPECT_NE(r.headline.find("noise-band rule"), std::string::npos) << r.headline;
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
