// compare with one launch a side: the single-launch rule (report/compare/single_launch.hpp) against
// values worked out by hand, and through compare_results: the launches' controls, a disturbed
// launch, a change at one size only and a change of every record.
#include <gtest/gtest.h>

#include <cmath>

#include "report/compare/compare.hpp"
#include "report/compare/single_launch.hpp"

namespace cb {
namespace {

// A median with the interval [p50 / 1.1, p50 x 1.1] from 20 samples: order statistics 4 and 17,
// coverage 1 - 2 x 1351 / 2^20 = 0.997423, normal quantile 3.014171, so the standard error of
// log(p50) is ln(1.21) / (2 x 3.014171) = 0.0316207.
MedianWithInterval median(double p50) {
  return {p50, p50 / 1.1, p50 * 1.1, 20};
}

// Two series (0 and 1) of four sizes each, 10, 20, 40 and 80 us; `factor` multiplies the new
// side's series-0 sizes listed.
std::vector<SingleLaunchInput> two_series(const std::vector<int>& slowed, double factor = 2) {
  std::vector<SingleLaunchInput> in;
  for (std::size_t s = 0; s < 2; ++s) {
    for (int i = 0; i < 4; ++i) {
      const double us = 10.0 * (1 << i);
      const bool slow = s == 0 && std::find(slowed.begin(), slowed.end(), i) != slowed.end();
      in.push_back({median(us), median(slow ? us * factor : us), s, 1024u << i});
    }
  }
  return in;
}

TEST(SingleLaunch, TheStandardErrorOfAMedianComesFromItsInterval) {
  EXPECT_NEAR(log_median_se(median(50)), 0.0316207, 1e-6);
  EXPECT_DOUBLE_EQ(log_median_se({5, 5, 5, 20}), 0);  // a point interval
  EXPECT_DOUBLE_EQ(log_median_se({5, 0, 0, 20}), 0);  // none recorded
  // 5 samples: min and max, covering 1 - 2/32 = 0.9375 (normal quantile 1.862732).
  EXPECT_NEAR(log_median_se({5, 4, 6, 5}), std::log(1.5) / (2 * 1.862732), 1e-6);
}

// Series 0's two largest sizes twice as slow. Both launches' median record is (20 + 40) / 2 in
// logs, so every other record's change is 0 and the scatter (1.4826 x the median absolute
// deviation) is 0; each changed record's interval is 2 x exp(-+2.575829 x 0.0316207 x sqrt 2) =
// 1.7824 .. 2.2442, clear of 1.25, and its neighbour's is too.
TEST(SingleLaunch, AChangeAtNeighbouringSizesBeyondTheFloorIsDecided) {
  SingleLaunchResult r = judge_single_launch(two_series({2, 3}), 1.25, 0.99);
  ASSERT_EQ(r.rows.size(), 8u);
  EXPECT_TRUE(r.enough_records);
  EXPECT_DOUBLE_EQ(r.scatter, 0);
  EXPECT_NEAR(r.level, std::pow(2, 0.25), 1e-12);  // two of eight records doubled
  for (int k : {2, 3}) {
    EXPECT_NEAR(r.rows[k].ratio, 2, 1e-12);
    EXPECT_NEAR(r.rows[k].low, 1.782399, 1e-5);
    EXPECT_NEAR(r.rows[k].high, 2.244167, 1e-5);
    EXPECT_EQ(r.rows[k].change, Change::Slower);
  }
  for (int k : {0, 1, 4, 5, 6, 7}) {
    EXPECT_NEAR(r.rows[k].ratio, 1, 1e-12);
    EXPECT_EQ(r.rows[k].change, Change::Same);
    EXPECT_FALSE(r.rows[k].beyond);
  }
}

// One size alone clears the floor: one launch's bad luck can do that, so it is left undecided.
TEST(SingleLaunch, AChangeAtOneSizeOnlyIsNotDecided) {
  SingleLaunchResult r = judge_single_launch(two_series({3}), 1.25, 0.99);
  EXPECT_NEAR(r.rows[3].low, 1.782399, 1e-5);
  EXPECT_TRUE(r.rows[3].clears);
  EXPECT_TRUE(r.rows[3].beyond);
  EXPECT_EQ(r.rows[3].change, Change::Same);
  // The same change on fewer than 8 records: too few to say how far the launches scatter.
  auto few = two_series({2, 3});
  few.resize(6);
  SingleLaunchResult f = judge_single_launch(few, 1.25, 0.99);
  EXPECT_FALSE(f.enough_records);
  EXPECT_EQ(f.rows[2].change, Change::Same);
  EXPECT_TRUE(f.rows[2].clears);
}

// The launches' records scatter apart: the new side's records alternate x f and / f. The changes
// are then +-ln f around their median +ln f (the doubled pair moves by ln 2 +- ln f), their median
// absolute deviation is 2 ln f, and the scatter 1.4826 x 2 ln f widens every interval to
// ratio x/ exp(2.575829 x sqrt(2 x 0.0316207^2 + scatter^2)).
TEST(SingleLaunch, TheLaunchesScatterWidensEveryInterval) {
  auto scattered = [](double f) {
    auto in = two_series({2, 3});
    for (std::size_t k = 0; k < in.size(); ++k) {
      in[k].next = median(in[k].next.p50 * (k % 2 ? 1 / f : f));
    }
    return judge_single_launch(in, 1.25, 0.99);
  };
  // f = 1.05: scatter 0.144673; the pair reads 2.1 (1.4218 .. 3.1018) and 1.9048 (1.2896 ..
  // 2.8134), both clear of 1.25.
  SingleLaunchResult r = scattered(1.05);
  EXPECT_NEAR(r.scatter, 1.4826 * 2 * std::log(1.05), 1e-9);
  EXPECT_NEAR(r.rows[2].ratio, 2.1, 1e-9);
  EXPECT_NEAR(r.rows[2].low, 1.42175, 1e-4);
  EXPECT_NEAR(r.rows[2].high, 3.10181, 1e-4);
  EXPECT_NEAR(r.rows[3].low, 1.28957, 1e-4);
  EXPECT_EQ(r.rows[2].change, Change::Slower);
  EXPECT_EQ(r.rows[3].change, Change::Slower);
  // f = 1.1: scatter 0.282614; the pair reads 2.2 (1.0528 .. 4.5973) and 1.8182 (0.8701 ..
  // 3.7995): beyond the floor, not clear of it: undecided.
  SingleLaunchResult w = scattered(1.1);
  EXPECT_NEAR(w.scatter, 0.282614, 1e-5);
  EXPECT_NEAR(w.rows[2].low, 1.05278, 1e-4);
  EXPECT_NEAR(w.rows[3].high, 3.79946, 1e-4);
  EXPECT_TRUE(w.rows[2].beyond);
  EXPECT_FALSE(w.rows[2].clears);
  EXPECT_EQ(w.rows[2].change, Change::Same);
}

// One launch of allreduce and allgather at 1 KiB .. 4 MiB (26 records, each median with a +-10 %
// interval from 20 samples), its control at `pingpong` ns (steady unless `moved`); `slow` times
// the allreduce records of at least 1 MiB.
ResultFile one_launch(double slow = 1, double pingpong = 100, bool moved = false,
                      bool with_control = true) {
  ResultFile f;
  f.path = "launch.json";
  f.format = "json";
  for (const char* collective : {"allreduce", "allgather"}) {
    for (std::uint64_t b = 1024; b <= (4u << 20); b *= 2) {
      ResultRecord r;
      r.backend = "mpi";
      r.library = "Open MPI 4.1.4";
      r.algorithm = "default";
      r.collective = collective;
      r.dtype = "float";
      r.op = std::string(collective) == "allreduce" ? "sum" : "none";
      r.placement = "out";
      r.nranks = 2;
      r.nnodes = 1;
      r.bytes = b;
      r.iters = 20;
      const double f_slow = std::string(collective) == "allreduce" && b >= (1u << 20) ? slow : 1;
      r.p50_us = (5 + static_cast<double>(b) / 2000) * f_slow;
      r.time_us = r.p50_us;
      r.min_us = r.p50_us / 1.2;
      r.p99_us = r.max_us = r.p50_us * 1.2;
      r.p50_low_us = r.p50_us / 1.1;
      r.p50_high_us = r.p50_us * 1.1;
      r.algbw_GBps = static_cast<double>(b) / r.time_us / 1e3;
      r.busbw_GBps = r.algbw_GBps;
      r.wrong = 0;
      f.records.push_back(r);
    }
  }
  if (with_control) {
    RunMeta m;
    LaunchControl c;
    c.samples = {{"start", pingpong, 300},
                 {"middle", moved ? pingpong * 3 : pingpong, 300},
                 {"end", pingpong, 300}};
    m.launches.push_back(c);
    f.meta = m;
    f.meta_json = nlohmann::json(m);
  }
  return f;
}

// The reproduction: one launch, and a copy of it with allreduce at 1 MiB and more twice as slow
// (p50 and every percentile), the control unchanged.
TEST(CompareSingleLaunch, ACopyWithLargeAllreduceTwiceAsSlowIsARegressionNamingIt) {
  CompareReport r = compare_results(one_launch(), one_launch(2), CompareOptions{});
  ASSERT_EQ(r.rows.size(), 26u);
  for (const auto& c : r.rows) {
    EXPECT_EQ(c.method, Method::SingleLaunch);
    const bool slowed = c.key.collective == "allreduce" && c.key.bytes >= (1u << 20);
    EXPECT_EQ(c.verdict, slowed ? Verdict::Regression : Verdict::Unchanged) << describe(c.key);
  }
  EXPECT_EQ(r.outcome, CompareOutcome::Regression);
  EXPECT_EQ(
      r.headline.rfind(
          "REGRESSION allreduce 1\u20134 MiB 2.00\u00d7 slower (99 % CI 1.78\u20132.2\u00d7, ", 0),
      0u)
      << r.headline;
  EXPECT_NE(r.headline.find("floor 1.25\u00d7; 1 v 1 launches)"), std::string::npos) << r.headline;
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_NE(r.warnings.back().find("judged against its own launch's median record"),
            std::string::npos);
  // The same launch against itself: nothing moved.
  CompareReport same = compare_results(one_launch(), one_launch(), CompareOptions{});
  EXPECT_EQ(same.outcome, CompareOutcome::Ok) << same.headline;
  EXPECT_EQ(same.headline.rfind("OK worst ", 0), 0u) << same.headline;
  EXPECT_NE(same.headline.find("1 v 1 launches"), std::string::npos) << same.headline;
}

TEST(CompareSingleLaunch, ControlsThatDisagreeOrMovedMakeItInconclusive) {
  CompareReport mode = compare_results(one_launch(), one_launch(2, 300), CompareOptions{});
  EXPECT_EQ(mode.outcome, CompareOutcome::Inconclusive);
  EXPECT_EQ(mode.count(Verdict::Regression), 0);
  EXPECT_EQ(mode.headline.rfind("INCONCLUSIVE one launch a side: the launches' controls disagree "
                                "(core-to-core round trip 300 ns against 100 ns",
                                0),
            0u)
      << mode.headline;
  EXPECT_NE(mode.headline.find("-- run both sides with --repeat 5"), std::string::npos);
  CompareReport moved = compare_results(one_launch(), one_launch(2, 100, true), CompareOptions{});
  EXPECT_EQ(moved.outcome, CompareOutcome::Inconclusive);
  EXPECT_NE(moved.headline.find("the new launch's control moved during it (core-to-core round "
                                "trip 3.0x apart between its samples)"),
            std::string::npos)
      << moved.headline;
}

// A CPU hog beside a launch leaves most records with a mean far above their median.
TEST(CompareSingleLaunch, ADisturbedLaunchMakesItInconclusive) {
  ResultFile hog = one_launch(2);
  for (std::size_t i = 0; i < 7; ++i) hog.records[i * 3].time_us *= 2;  // 7 of 26: over 1/4
  CompareReport r = compare_results(one_launch(), hog, CompareOptions{});
  EXPECT_EQ(r.outcome, CompareOutcome::Inconclusive);
  EXPECT_NE(r.headline.find("the new launch was disturbed: 7 of its 26 records had outliers"),
            std::string::npos)
      << r.headline;
  hog.records[0].time_us /= 2;  // 6 of 26: within the quarter
  EXPECT_EQ(compare_results(one_launch(), hog, CompareOptions{}).outcome,
            CompareOutcome::Regression);
}

TEST(CompareSingleLaunch, AChangeAtOneSizeOnlyIsInconclusiveNeverOk) {
  ResultFile next = one_launch();
  for (auto& r : next.records) {
    if (r.collective == "allgather" && r.bytes == (4u << 20)) {
      r.p50_us *= 2, *r.p50_low_us *= 2, *r.p50_high_us *= 2, r.time_us *= 2;
    }
  }
  CompareReport r = compare_results(one_launch(), next, CompareOptions{});
  EXPECT_EQ(r.outcome, CompareOutcome::Inconclusive);
  EXPECT_EQ(r.headline.rfind("INCONCLUSIVE allgather mpi/default float none out 2 ranks 4 MiB "
                             "2.00\u00d7 slower (99 % CI ",
                             0),
            0u)
      << r.headline;
  EXPECT_NE(r.headline.find("it clears the floor at this size only"), std::string::npos);
}

// Every record three times slower: the shape cancels it; with both controls measured and agreeing
// it is the build's, without them it cannot be told from a slower machine.
TEST(CompareSingleLaunch, EveryRecordSlowerIsTheLevelsRegressionWhereControlsAgree) {
  auto slower = [](ResultFile f) {
    for (auto& r : f.records) r.p50_us *= 3, *r.p50_low_us *= 3, *r.p50_high_us *= 3;
    return f;
  };
  CompareReport r = compare_results(one_launch(), slower(one_launch()), CompareOptions{});
  EXPECT_EQ(r.outcome, CompareOutcome::Regression);
  EXPECT_NEAR(r.single_launch_level, 3, 1e-9);
  EXPECT_EQ(r.headline,
            "REGRESSION every record 3.0\u00d7 slower (geometric mean over 26 records, "
            "floor 1.25\u00d7; 1 v 1 launches whose controls agree)");
  CompareReport blind = compare_results(one_launch(1, 100, false, false),
                                        slower(one_launch(1, 100, false, false)), CompareOptions{});
  EXPECT_EQ(blind.outcome, CompareOutcome::Inconclusive);
  EXPECT_NE(blind.headline.find("every record 3.00\u00d7 slower (geometric mean over 26 records"),
            std::string::npos)
      << blind.headline;
}

// Files without the interval (written before it): the noise-band rule; a change beyond the
// threshold within its band is inconclusive, not OK.
TEST(CompareSingleLaunch, WithoutIntervalsTheNoiseBandsUndecidedChangeIsInconclusive) {
  auto plain = [](ResultFile f) {
    for (auto& r : f.records) r.p50_low_us.reset(), r.p50_high_us.reset();
    return f;
  };
  ResultFile next = plain(one_launch(2));
  for (auto& r : next.records) r.p99_us = r.p50_us * 4;  // a band of 300 %
  CompareReport r = compare_results(plain(one_launch()), next, CompareOptions{});
  EXPECT_EQ(r.rows.front().method, Method::NoiseBand);
  EXPECT_EQ(r.count(Verdict::Regression), 0);
  EXPECT_EQ(r.outcome, CompareOutcome::Inconclusive);
  EXPECT_NE(r.headline.find("within its noise band of +300.0%"), std::string::npos) << r.headline;
}

}  // namespace
}  // namespace cb
