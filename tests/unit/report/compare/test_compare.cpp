#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <sstream>

#include "common/error.hpp"
#include "report/compare/compare.hpp"
#include "report/compare/compare_output.hpp"
#include "report_fixtures.hpp"

namespace cb {
namespace {

using test::mpi_allreduce_record;
using test::result_fixture;

const Comparison& row(const CompareReport& r, const std::string& collective, std::uint64_t bytes) {
  for (const auto& c : r.rows) {
    if (c.key.collective == collective && c.key.bytes == bytes) return c;
  }
  throw std::runtime_error("no row for " + collective + " " + std::to_string(bytes));
}

// The crafted files have one launch a side, judged by the single-launch rule; their changes
// were made for a 5 % threshold.
CompareOptions five_percent() {
  CompareOptions o;
  o.threshold = 0.05;
  return o;
}

CompareReport fixtures(const char* base, const char* next, CompareOptions o = five_percent()) {
  return compare_results(read_result_file(result_fixture(base)),
                         read_result_file(result_fixture(next)), o);
}

ResultRecord allreduce(std::uint64_t bytes, double time_us, double p50_us, double p99_us) {
  ResultRecord r = mpi_allreduce_record(bytes);
  r.library = "Open MPI 4.1.4";
  r.iters = 100;
  r.time_us = time_us;
  r.min_us = p50_us * 0.9;
  r.p50_us = p50_us;
  r.p99_us = p99_us;
  r.max_us = p99_us * 2;
  r.cv = 0.1;
  r.algbw_GBps = static_cast<double>(bytes) / time_us / 1e3;
  r.busbw_GBps = r.algbw_GBps;
  return r;
}

ResultFile file_of(std::vector<ResultRecord> records, const char* path) {
  ResultFile f;
  f.path = path;
  f.format = "jsonl";
  f.records = std::move(records);
  return f;
}

TEST(Compare, FindsTheCraftedRegressionsImprovementAndNoise) {
  CompareReport r = fixtures("base.json", "new-regressed.json");
  EXPECT_EQ(row(r, "allreduce", 8).verdict, Verdict::Regression);        // time +40 %
  EXPECT_EQ(row(r, "allreduce", 1 << 20).verdict, Verdict::Regression);  // busbw -30 %
  EXPECT_EQ(row(r, "allreduce", 65536).verdict, Verdict::Improvement);   // busbw +25 %
  EXPECT_EQ(row(r, "allreduce", 16 << 20).verdict, Verdict::Noise);      // -12 %, 40 % spread
  EXPECT_EQ(row(r, "allreduce", 1024).verdict, Verdict::Unchanged);      // +3 %
  EXPECT_EQ(row(r, "barrier", 0).verdict, Verdict::Unchanged);
  EXPECT_EQ(r.regressions(), 2);
  EXPECT_NEAR(row(r, "allreduce", 1 << 20).change, -0.30, 0.001);
  EXPECT_NEAR(row(r, "allreduce", 8).change, 0.40, 0.001);
}

TEST(Compare, TimeBelowTheLatencyThresholdAndForBarrierElseBusbw) {
  CompareReport r = fixtures("base.json", "new-regressed.json");
  EXPECT_EQ(row(r, "allreduce", 8).metric, Metric::Time);
  EXPECT_EQ(row(r, "allreduce", 1024).metric, Metric::Time);
  EXPECT_EQ(row(r, "allreduce", 65536).metric, Metric::Busbw);  // 64 KiB is the first busbw size
  EXPECT_EQ(row(r, "barrier", 0).metric, Metric::Time);
  CompareOptions all_bandwidth = five_percent();
  all_bandwidth.latency_bytes = 0;
  CompareReport b = fixtures("base.json", "new-regressed.json", all_bandwidth);
  EXPECT_EQ(row(b, "allreduce", 8).metric, Metric::Busbw);
  EXPECT_EQ(row(b, "barrier", 0).metric, Metric::Time);  // no bandwidth to compare
}

TEST(Compare, ListsRecordsPresentOnOneSideOnly) {
  CompareReport r = fixtures("base.json", "new-regressed.json");
  ASSERT_EQ(r.base_only.size(), 1u);
  EXPECT_EQ(r.base_only[0].collective, "broadcast");
  EXPECT_EQ(r.base_only[0].root, 0);
  ASSERT_EQ(r.new_only.size(), 1u);
  EXPECT_EQ(r.new_only[0].collective, "allgather");
  CompareOptions strict = five_percent();
  strict.fail_on_missing = true;
  EXPECT_EQ(fixtures("base.json", "new-regressed.json", strict).regressions(), 3);
}

TEST(Compare, NoiseBandWidensWithTheSpreadAndCanBeTurnedOff) {
  // 12 % slower with 40 % (p99-p50)/p50 on the new side: noise at factor 1, regression at 0.
  ResultFile base = file_of({allreduce(1 << 20, 200, 196, 205.8)}, "base");
  ResultFile next = file_of({allreduce(1 << 20, 227.27, 222.7, 311.8)}, "new");
  CompareReport r = compare_results(base, next, five_percent());
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_NEAR(r.rows[0].noise, 0.40, 0.01);
  EXPECT_EQ(r.rows[0].verdict, Verdict::Noise);
  CompareOptions off = five_percent();
  off.noise_factor = 0;
  EXPECT_EQ(compare_results(base, next, off).rows[0].verdict, Verdict::Regression);
}

TEST(Compare, AMeanDraggedByOutliersIsNotARegressionWhenTheMedianHolds) {
  // Mean 30 % worse, median unchanged, tight spread: a few stragglers, not a slowdown.
  ResultFile base = file_of({allreduce(1 << 20, 200, 196, 200)}, "base");
  ResultFile next = file_of({allreduce(1 << 20, 260, 196, 200)}, "new");
  CompareReport r = compare_results(base, next, five_percent());
  EXPECT_NEAR(r.rows[0].worse, 0.2308, 0.001);
  EXPECT_NEAR(r.rows[0].median_worse, 0.0, 1e-9);
  EXPECT_EQ(r.rows[0].verdict, Verdict::Noise);
}

TEST(Compare, RecordsWithOutliersAreCountedAndNoted) {
  // Mean 1.6 x p50 on the new side: flagged; the quiet base is not.
  ResultFile base =
      file_of({allreduce(1 << 20, 200, 196, 200), allreduce(2 << 20, 400, 390, 400)}, "base");
  ResultFile next =
      file_of({allreduce(1 << 20, 320, 196, 200), allreduce(2 << 20, 400, 390, 400)}, "new");
  CompareReport r = compare_results(base, next, five_percent());
  EXPECT_EQ(row(r, "allreduce", 1 << 20).base.outlier_runs, 0);
  EXPECT_EQ(row(r, "allreduce", 1 << 20).next.outlier_runs, 1);
  EXPECT_EQ(row(r, "allreduce", 2 << 20).next.outlier_runs, 0);
  auto outlier_notes = [](const CompareReport& c) {
    int n = 0;
    for (const auto& note : c.notes) n += note.find("had outliers") != std::string::npos ? 1 : 0;
    return n;
  };
  EXPECT_EQ(outlier_notes(r), 1);
  bool found = false;
  for (const auto& note : r.notes)
    found = found || note.rfind("1 of 2 compared records had outliers on a side", 0) == 0;
  EXPECT_TRUE(found);
  // Without outliers, no such note.
  EXPECT_EQ(outlier_notes(compare_results(base, base, {})), 0);
}

TEST(Compare, ThresholdDecidesWhatCounts) {
  CompareOptions loose = five_percent();
  loose.threshold = 0.5;
  CompareReport r = fixtures("base.json", "new-regressed.json", loose);
  EXPECT_EQ(r.regressions(), 0);
  EXPECT_EQ(row(r, "allreduce", 8).verdict, Verdict::Unchanged);
}

TEST(Compare, WarnsWhenHardwareHostsLibrariesOrSettingsDiffer) {
  CompareReport r = fixtures("base.json", "new-other-host.json");
  EXPECT_EQ(r.regressions(), 0);
  auto has = [&](const std::string& needle) {
    for (const auto& w : r.warnings) {
      if (w.find(needle) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(has("topology fingerprint 3f2a9c01d4e5b6a7 (base) vs 77c0ffee00112233 (new)"));
  EXPECT_TRUE(has("hosts differ: ci-node-a (base) vs ci-node-b (new)"));
  EXPECT_TRUE(has("mpi library differs: Open MPI 4.1.4 (base) vs Open MPI 5.0.3 (new)"));
  EXPECT_TRUE(has("NCCL_ALGO=Ring"));
  EXPECT_FALSE(has("orte_hnp_uri"));
  // The library warning is not repeated per record; the fifth says that one launch per side
  // allows no confidence bound.
  EXPECT_EQ(r.warnings.size(), 5u);
  EXPECT_TRUE(has("no confidence bound can be given"));
}

TEST(Compare, LauncherVariablesAloneRaiseNoWarning) {
  auto warnings = fixtures("base.json", "new-regressed.json").warnings;
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("one launch on a side"), std::string::npos);
}

TEST(Compare, RecordLibrariesAreComparedWithoutMeta) {
  ResultFile base = file_of({allreduce(1 << 20, 200, 196, 200)}, "base");
  ResultRecord moved = allreduce(1 << 20, 200, 196, 200);
  moved.library = "MPICH 4.0.2";
  CompareReport r = compare_results(base, file_of({moved}, "new"), five_percent());
  ASSERT_EQ(r.warnings.size(), 2u);  // and the one-launch-per-side warning
  EXPECT_EQ(r.warnings[0], "mpi library differs: Open MPI 4.1.4 (base) vs MPICH 4.0.2 (new)");
  EXPECT_EQ(r.notes.size(), 2u);  // neither side has run metadata
}

TEST(Compare, RepeatedRunsOfOneCaseAreReducedToTheirMedian) {
  CompareReport r = fixtures("base.json", "repeats.jsonl");
  const Comparison& c = row(r, "allreduce", 1 << 20);
  EXPECT_EQ(c.next.runs, 3);
  EXPECT_EQ(c.base.runs, 1);
  // Times 260, 200, 210: the median is 210 us -> 1 MiB / 210 us.
  EXPECT_NEAR(c.next.value, 1048576.0 / 210.0 / 1e3, 1e-9);
}

TEST(Compare, ZeroFiguresAreNotComparedButNoted) {
  ResultFile base = file_of({allreduce(1 << 20, 200, 196, 200)}, "base");
  ResultRecord zero = allreduce(1 << 20, 200, 196, 200);
  zero.busbw_GBps = 0.0;
  CompareReport r = compare_results(base, file_of({zero}, "new"), five_percent());
  EXPECT_TRUE(r.rows.empty());
  EXPECT_NE(r.notes.back().find("not compared"), std::string::npos);
}

TEST(Compare, WrongElementsOnTheNewSideMakeTheVerdictInvalidEvenOverARegression) {
  ResultRecord slow = allreduce(1024, 500, 500, 600);  // 5x slower: a regression by itself
  slow.wrong = 3;
  ResultRecord also_wrong = allreduce(2048, 100, 100, 120);
  also_wrong.wrong = 1;
  CompareReport r = compare_results(
      file_of({allreduce(1024, 100, 100, 120), allreduce(2048, 100, 100, 120)}, "base.jsonl"),
      file_of({slow, also_wrong}, "new.jsonl"), five_percent());
  EXPECT_EQ(r.outcome, CompareOutcome::Invalid);
  EXPECT_EQ(r.headline,
            "INVALID new.jsonl: allreduce mpi/default float sum out 2 ranks 1 KiB has 3 wrong "
            "elements (and 1 more record with wrong elements): validation failed, not compared");
  std::ostringstream out;
  kCompareFormats.named("json").write(r, out);
  auto doc = nlohmann::json::parse(out.str());
  EXPECT_EQ(doc["verdict"]["outcome"], "invalid");
  EXPECT_EQ(doc["summary"]["failed"], true);
}

TEST(CompareOutput, MarkdownLeadsWithTheVerdictAndFoldsUnchangedRows) {
  std::ostringstream md;
  kCompareFormats.named("md").write(fixtures("base.json", "new-regressed.json"), md);
  std::string s = md.str();
  EXPECT_EQ(s.rfind("### REGRESSION allreduce 8 B\u20131 MiB ", 0), 0u) << s;
  EXPECT_NE(s.find("<details><summary>2 unchanged</summary>"), std::string::npos);
  EXPECT_NE(s.find("**Only in base:**"), std::string::npos);
  EXPECT_NE(s.find("| **-30.0%** |"), std::string::npos) << s;
  EXPECT_EQ(s.find("| REGRESSION"), std::string::npos);  // the table's shout is for terminals
}

TEST(CompareOutput, CsvHasOneRowPerComparisonAndOneSidedRecords) {
  std::ostringstream csv;
  kCompareFormats.named("csv").write(fixtures("base.json", "new-regressed.json"), csv);
  std::istringstream in(csv.str());
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line)) lines.push_back(line);
  ASSERT_EQ(lines.size(), 1u + 6 + 2);
  EXPECT_EQ(lines[0].rfind("collective,backend,algorithm,", 0), 0u);
  EXPECT_NE(lines[1].find(",regression"), std::string::npos);
  EXPECT_NE(lines[7].find(",base_only"), std::string::npos);
  EXPECT_NE(lines[8].find(",new_only"), std::string::npos);
}

TEST(CompareOutput, JsonCarriesSchemaSummaryAndRows) {
  std::ostringstream out;
  kCompareFormats.named("json").write(fixtures("base.json", "new-regressed.json"), out);
  auto doc = nlohmann::json::parse(out.str());
  EXPECT_EQ(doc["schema"], "commbench/compare/v1");
  EXPECT_EQ(doc["summary"]["regressions"], 2);
  EXPECT_EQ(doc["summary"]["failed"], true);
  EXPECT_EQ(doc["comparisons"].size(), 6u);
  EXPECT_EQ(doc["comparisons"][0]["status"], "regression");
  EXPECT_EQ(doc["base_only"][0]["collective"], "broadcast");
}

TEST(CompareOutput, UnknownFormatIsAUsageError) {
  std::ostringstream out;
  EXPECT_THROW(kCompareFormats.named("html"), Error);
  EXPECT_THROW(kCompareFormats.named("jsonl"), Error);
}

}  // namespace
}  // namespace cb
