// The result record's field table: every field reaches CSV and JSON and comes back, in the
// contract's column order. The comparisons below name each member on their own, so that a
// member the table lacks (a field never written or never read) fails them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/record.hpp"

namespace cb {
namespace {

// The contract's columns (CSV header, JSON keys), in order: the later ones at the end.
const std::vector<std::string> kContractColumns = {
    "backend",   "library",    "algorithm",     "collective",  "dtype",         "op",
    "placement", "root",       "nranks",        "nnodes",      "bytes",         "count",
    "iters",     "time_us",    "min_us",        "p50_us",      "p99_us",        "max_us",
    "cv",        "algbw_GBps", "busbw_GBps",    "wrong",       "env",           "outliers",
    "roof_GBps", "efficiency", "roof_basis",    "fault_bytes", "outlier_cause", "split",
    "incast",    "send_skew",  "imbalance_tax", "uniform_us",  "drop_share",
    "p50_low_us", "p50_high_us"};

// Every stored member set, each to a value that differs from its default and from the others.
ResultRecord full_record() {
  ResultRecord r;
  r.backend = "gloo";
  r.library = "Gloo, \"quoted\"";
  r.algorithm = "ring";
  r.collective = "reduce";
  r.dtype = "double";
  r.op = "max";
  r.placement = "in";
  r.root = 2;
  r.nranks = 4;
  r.nnodes = 2;
  r.bytes = 65536;
  r.count = 8192;
  r.iters = 123;
  r.time_us = 20.5;  // > 1.5 x p50: outliers
  r.min_us = 9.25;
  r.p50_us = 10.5;
  r.p99_us = 40.75;
  r.max_us = 50.125;
  r.cv = 0.375;
  r.algbw_GBps = 3.1875;
  r.busbw_GBps = 2.375;  // six significant digits survive CSV ("%.6g")
  r.wrong = 7;
  r.env = "NCCL_ALGO=ring NCCL_PROTO=LL";
  r.roof_GBps = 6.25;
  r.efficiency = 0.375;
  r.roof_basis = "host copy 6.2 GB/s, \"given\"";
  r.fault_bytes = 2500000;  // six significant digits survive CSV
  r.outlier_cause = "page faults";
  r.split = "moe:64,8,4,1.25";
  r.incast = 1.625;
  r.send_skew = 1.125;
  r.imbalance_tax = 1.4375;
  r.uniform_us = 14.25;
  r.drop_share = 0.03125;
  r.p50_low_us = 10.25;
  r.p50_high_us = 11.125;
  return r;
}

// Member by member, independently of the table.
void expect_same_members(const ResultRecord& a, const ResultRecord& b) {
  EXPECT_EQ(a.backend, b.backend);
  EXPECT_EQ(a.library, b.library);
  EXPECT_EQ(a.algorithm, b.algorithm);
  EXPECT_EQ(a.collective, b.collective);
  EXPECT_EQ(a.dtype, b.dtype);
  EXPECT_EQ(a.op, b.op);
  EXPECT_EQ(a.placement, b.placement);
  EXPECT_EQ(a.root, b.root);
  EXPECT_EQ(a.nranks, b.nranks);
  EXPECT_EQ(a.nnodes, b.nnodes);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.count, b.count);
  EXPECT_EQ(a.iters, b.iters);
  EXPECT_EQ(a.time_us, b.time_us);
  EXPECT_EQ(a.min_us, b.min_us);
  EXPECT_EQ(a.p50_us, b.p50_us);
  EXPECT_EQ(a.p99_us, b.p99_us);
  EXPECT_EQ(a.max_us, b.max_us);
  EXPECT_EQ(a.cv, b.cv);
  EXPECT_EQ(a.algbw_GBps, b.algbw_GBps);
  EXPECT_EQ(a.busbw_GBps, b.busbw_GBps);
  EXPECT_EQ(a.wrong, b.wrong);
  EXPECT_EQ(a.env, b.env);
  EXPECT_EQ(a.roof_GBps, b.roof_GBps);
  EXPECT_EQ(a.efficiency, b.efficiency);
  EXPECT_EQ(a.roof_basis, b.roof_basis);
  EXPECT_EQ(a.fault_bytes, b.fault_bytes);
  EXPECT_EQ(a.split, b.split);
  EXPECT_EQ(a.incast, b.incast);
  EXPECT_EQ(a.send_skew, b.send_skew);
  EXPECT_EQ(a.imbalance_tax, b.imbalance_tax);
  EXPECT_EQ(a.uniform_us, b.uniform_us);
  EXPECT_EQ(a.drop_share, b.drop_share);
  EXPECT_EQ(a.p50_low_us, b.p50_low_us);
  EXPECT_EQ(a.p50_high_us, b.p50_high_us);
  EXPECT_EQ(a.repeat, b.repeat);
  ASSERT_EQ(a.repeats.size(), b.repeats.size());
  for (std::size_t i = 0; i < a.repeats.size(); ++i)
    expect_same_members(a.repeats[i], b.repeats[i]);
}

std::vector<std::string> keys(const nlohmann::ordered_json& j) {
  std::vector<std::string> out;
  for (const auto& [k, v] : j.items()) out.push_back(k);
  return out;
}

TEST(RecordFields, ColumnsAreTheContractInOrder) {
  EXPECT_EQ(std::vector<std::string>(kResultColumns.begin(), kResultColumns.end()),
            kContractColumns);
  EXPECT_EQ(kResultColumnsRequired, 22u);  // files written before `env` end at `wrong`
  EXPECT_EQ(keys(ordered_json(full_record())), kContractColumns);
  EXPECT_EQ(record_fields(full_record()).size(), kContractColumns.size());
}

TEST(RecordFields, EveryFieldRoundTripsThroughCsv) {
  const ResultRecord r = full_record();
  const std::vector<std::string> fields = record_fields(r);
  EXPECT_EQ(fields[7], "2");      // root
  EXPECT_EQ(fields[13], "20.5");  // time_us, "%.6g"
  EXPECT_EQ(fields[21], "7");     // wrong
  EXPECT_EQ(fields[23], "true");  // outliers, derived
  expect_same_members(record_from_fields(fields, "row"), r);

  ResultRecord empty = r;  // empty optionals, the root of an unrooted collective
  empty.root = -1;
  empty.algbw_GBps.reset();
  empty.busbw_GBps.reset();
  empty.wrong.reset();
  empty.env.clear();
  const std::vector<std::string> blank = record_fields(empty);
  EXPECT_EQ(blank[7], "-1");
  EXPECT_EQ(blank[19], "");
  EXPECT_EQ(blank[21], "");
  expect_same_members(record_from_fields(blank, "row"), empty);
}

TEST(RecordFields, EveryFieldRoundTripsThroughJson) {
  const ResultRecord r = full_record();
  const nlohmann::json plain = r;
  EXPECT_EQ(plain.size(), kContractColumns.size());
  EXPECT_EQ(plain["outliers"], true);
  expect_same_members(plain.get<ResultRecord>(), r);
  expect_same_members(nlohmann::json::parse(ordered_json(r).dump()).get<ResultRecord>(), r);

  ResultRecord empty = r;
  empty.algbw_GBps.reset();
  empty.wrong.reset();
  const nlohmann::json nulls = empty;
  EXPECT_TRUE(nulls["algbw_GBps"].is_null());
  EXPECT_TRUE(nulls["wrong"].is_null());
  expect_same_members(nulls.get<ResultRecord>(), empty);
}

// A summary over launches writes each launch's figures (the kFigure rows) after its index, and
// reads the rest of each launch from the summary.
TEST(RecordFields, RepetitionsCarryTheFiguresOfEachLaunch) {
  ResultRecord summary = full_record();
  for (int i = 0; i < 2; ++i) {
    ResultRecord launch = full_record();
    launch.repeat = i;
    launch.time_us = 10 + i;
    launch.wrong.reset();
    summary.repeats.push_back(launch);
  }
  const nlohmann::ordered_json j = ordered_json(summary);
  std::vector<std::string> expected = kContractColumns;
  expected.insert(expected.end(), {"repetitions", "repeats"});
  EXPECT_EQ(keys(j), expected);
  EXPECT_EQ(keys(j["repeats"][1]),
            (std::vector<std::string>{"repeat", "iters", "time_us", "min_us", "p50_us", "p99_us",
                                      "max_us", "cv", "algbw_GBps", "busbw_GBps", "wrong",
                                      "fault_bytes", "imbalance_tax", "uniform_us", "p50_low_us",
                                      "p50_high_us"}));
  expect_same_members(nlohmann::json::parse(j.dump()).get<ResultRecord>(), summary);
}

// Files written before the later columns: a CSV of 22 or 23 columns, JSON without `env`.
TEST(RecordFields, OlderFilesWithoutTheLaterColumnsAreRead) {
  ResultRecord r = full_record();
  std::vector<std::string> fields = record_fields(r);
  ResultRecord no_interval = r;
  no_interval.p50_low_us.reset();
  no_interval.p50_high_us.reset();
  fields.pop_back();  // p50_high_us
  fields.pop_back();  // p50_low_us
  expect_same_members(record_from_fields(fields, "row"), no_interval);
  ResultRecord no_split = no_interval;  // files written before alltoallv's columns
  no_split.split.clear();
  no_split.incast.reset();
  no_split.send_skew.reset();
  no_split.imbalance_tax.reset();
  no_split.uniform_us.reset();
  no_split.drop_share.reset();
  for (int i = 0; i < 6; ++i) fields.pop_back();  // split ... drop_share
  expect_same_members(record_from_fields(fields, "row"), no_split);
  ResultRecord no_cause = no_split;
  no_cause.outlier_cause.clear();
  fields.pop_back();  // outlier_cause
  expect_same_members(record_from_fields(fields, "row"), no_cause);
  ResultRecord no_faults = no_cause;
  no_faults.fault_bytes.reset();
  fields.pop_back();  // fault_bytes
  expect_same_members(record_from_fields(fields, "row"), no_faults);
  ResultRecord no_roof = no_faults;
  no_roof.roof_GBps.reset();
  no_roof.efficiency.reset();
  no_roof.roof_basis.clear();
  for (int i = 0; i < 3; ++i) fields.pop_back();  // roof_GBps, efficiency, roof_basis
  expect_same_members(record_from_fields(fields, "row"), no_roof);
  r = no_roof;
  fields.pop_back();  // outliers
  expect_same_members(record_from_fields(fields, "row"), r);
  fields.pop_back();  // env
  ResultRecord no_env = r;
  no_env.env.clear();
  expect_same_members(record_from_fields(fields, "row"), no_env);
  fields.pop_back();  // wrong: every file has it
  EXPECT_THROW(record_from_fields(fields, "row"), Error);

  nlohmann::json j = r;
  j.erase("env");
  j.erase("outliers");
  expect_same_members(j.get<ResultRecord>(), no_env);
  j.erase("cv");  // a column every file has
  EXPECT_THROW(j.get<ResultRecord>(), Error);
}

TEST(RecordFields, HeaderOfEveryColumnOrOfAnOlderFileIsAccepted) {
  std::vector<std::string> header = kContractColumns;
  EXPECT_TRUE(result_csv_header(header));
  for (int later = 0; later < 15; ++later) {  // p50_high_us ... env
    header.pop_back();
    EXPECT_TRUE(result_csv_header(header));
  }
  header.pop_back();
  EXPECT_FALSE(result_csv_header(header));
  header = kContractColumns;
  header.push_back("extra");
  EXPECT_FALSE(result_csv_header(header));
  header = kContractColumns;
  std::swap(header[0], header[1]);
  EXPECT_FALSE(result_csv_header(header));
}

// Each row's type decides what it accepts: counts are never negative, root may be.
TEST(RecordFields, ReadingChecksEachFieldByItsType) {
  std::vector<std::string> fields = record_fields(full_record());
  fields[7] = "-1";  // root
  EXPECT_EQ(record_from_fields(fields, "row").root, -1);
  fields[8] = "-1";  // nranks
  EXPECT_THROW(record_from_fields(fields, "row"), Error);
  fields = record_fields(full_record());
  fields[20] = "-0.5";  // busbw_GBps
  EXPECT_THROW(record_from_fields(fields, "row"), Error);
  fields = record_fields(full_record());
  fields[21] = "x";  // wrong
  EXPECT_THROW(record_from_fields(fields, "row"), Error);

  nlohmann::json j = full_record();
  j["root"] = -1;
  EXPECT_EQ(j.get<ResultRecord>().root, -1);
  j["nnodes"] = -1;
  EXPECT_THROW(j.get<ResultRecord>(), Error);
  j = full_record();
  j["env"] = 3;
  EXPECT_THROW(j.get<ResultRecord>(), Error);
  j = full_record();
  j["library"] = nullptr;  // a string every file has
  EXPECT_THROW(j.get<ResultRecord>(), Error);
}

// meta.straggler: written with every field and read back the same; absent stays absent.
TEST(RecordFields, MetaStragglerRoundTrips) {
  RunMeta m;
  RankStraggler st;
  st.found = true;
  st.rank = 3;
  st.host = "h2";
  st.core = 7;
  st.slowest_cases = 11;
  st.cases = 12;
  st.ratio = 1.25;
  st.component = "host";
  st.host_ranks = {2, 3};
  st.calls = 300;
  st.last_calls = 290;
  st.participants = 3;
  st.late_us = 2950.5;
  st.delay_cost = 0.96;
  st.wait_us = 2930;
  st.between_us = 2960;
  st.late_exit_us = 1.5;
  st.inside_us = 110;
  st.clock_error_us = 12.25;
  st.where = "before the call";
  m.straggler = st;
  nlohmann::json j = m;
  EXPECT_TRUE(j["straggler"]["gpu"].is_null());
  EXPECT_EQ(j["straggler"]["core"], 7);
  RunMeta back = j.get<RunMeta>();
  ASSERT_TRUE(back.straggler);
  EXPECT_EQ(*back.straggler, st);
  m.straggler.reset();
  j = m;
  EXPECT_FALSE(j.contains("straggler"));
  EXPECT_FALSE(j.get<RunMeta>().straggler);
}

// A record's `lateness`: JSON only, written and read back the same; absent stays absent, and
// CSV never has it.
TEST(RecordFields, LatenessRoundTripsInJsonOnly) {
  ResultRecord r = full_record();
  CaseLateness l;
  l.calls = 49;
  l.rank = 2;
  l.host = "h3";
  l.last_share = 0.98;
  l.late_us = 108.25;
  l.delay_cost = 0.915;
  l.wait_us = 26;
  l.inside_us = 6.75;
  l.clock_error_us = 0.5;
  r.lateness = l;
  nlohmann::json j = r;
  EXPECT_EQ(j["lateness"]["rank"], 2);
  EXPECT_EQ(j.get<ResultRecord>().lateness, l);
  EXPECT_EQ(nlohmann::json(ordered_json(r)).get<ResultRecord>().lateness, l);
  r.lateness.reset();
  j = r;
  EXPECT_FALSE(j.contains("lateness"));
  EXPECT_FALSE(j.get<ResultRecord>().lateness);
  for (const auto& f : kResultFields) EXPECT_NE(f.name, "lateness");
}

}  // namespace
}  // namespace cb
