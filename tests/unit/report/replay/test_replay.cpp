// replay's report: its JSON read back, its CSV's shape, the one-line answer, and the verdict over
// launches on bucket caps.
#include <gtest/gtest.h>

#include <sstream>

#include "common/csv.hpp"
#include "report/replay/replay_output.hpp"
#include "report/replay/replay_verdict.hpp"

namespace cb {
namespace {

ReplayRecord record(double cap, double step_us, int repeat = -1) {
  ReplayRecord r;
  r.backend = "mpi";
  r.library = "Open MPI 4.1.4";
  r.pattern = "ddp";
  r.model = "gpt2";
  r.nranks = 2;
  r.nnodes = 1;
  r.bucket_cap_mb = cap;
  r.first_bucket_mb = 1;
  r.params = 124439808;
  r.bytes = 497759232;
  r.warmup = 3;
  r.steps = 10;
  r.step_us = r.step_min_us = r.step_max_us = step_us;
  r.compute_us = 100000;
  r.comm_us = 60000;
  r.exposed_us = step_us - r.compute_us;
  r.overlap = 1 - r.exposed_us / r.comm_us;
  r.wrong = 0;
  if (repeat >= 0) r.repeat = repeat;
  ReplayOpRecord op;
  op.collective = "allreduce";
  op.dtype = "float";
  op.phase = "backward";
  op.label = "bucket 0";
  op.tensors = 12;
  op.params = 7087872;
  op.count = 7087872;
  op.bytes = 28351488;
  op.start_us = 1000;
  op.end_us = step_us;
  op.time_us = step_us - 1000;
  r.ops = {op};
  return r;
}

TEST(ReplayReport, JsonReadsBackAsWritten) {
  ReplayReport report;
  report.meta.version = "1.0";
  report.records = {record(25, 130000), record(100, 110000)};
  report.records[1].launches = {record(100, 110000, 0), record(100, 111000, 1)};
  report.verdicts = {{"mpi", "keep", 25, 25, 100, "KEEP ..."}};
  std::ostringstream out;
  write_replay_json(report, out);
  const ReplayReport back = parse_replay_document(out.str(), "r.json");
  EXPECT_EQ(back.records, report.records);
  EXPECT_EQ(back.verdicts, report.verdicts);
  EXPECT_EQ(back.meta.version, "1.0");
}

TEST(ReplayReport, CsvHasAStepRowPerSettingAndAnOpRowPerCollective) {
  ReplayReport report;
  report.records = {record(25, 130000)};
  std::ostringstream out;
  write_replay_csv(report, out);
  std::istringstream in(out.str());
  std::string line;
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line)) rows.push_back(csv_split(line));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], replay_csv_columns());
  for (const auto& r : rows) EXPECT_EQ(r.size(), replay_csv_columns().size());
  EXPECT_EQ(rows[1][0], "step");
  EXPECT_EQ(rows[1][12], "130000");  // step_us
  EXPECT_EQ(rows[2][0], "op");
  EXPECT_EQ(rows[2][21], "allreduce");
}

TEST(ReplayReport, TheAnswerNamesBucketsCommunicationExposureAndCompute) {
  EXPECT_EQ(replay_answer(record(25, 130000)),
            "gpt2 on 2 ranks (mpi, bucket cap 25 MiB): 1 bucket, 60 ms of allreduce, 30 ms of it "
            "exposed behind a 100 ms backward (overlap 50.0%)");
}

std::vector<ReplayRecord> launches(double cap, std::initializer_list<double> steps) {
  std::vector<ReplayRecord> out;
  int k = 0;
  for (double s : steps) out.push_back(record(cap, s, k++));
  return out;
}

TEST(ReplayVerdict, ACapFasterBeyondTheNoiseIsAdvised) {
  const auto ref = summarize_launches(launches(25, {130000, 131000, 129500, 130400, 130900}));
  const auto big = summarize_launches(launches(100, {110000, 110500, 109800, 110300, 110900}));
  const auto small = summarize_launches(launches(1, {190000, 191000, 189000, 190500, 190200}));
  const auto v = judge_bucket_caps({small, ref, big}, {}, 0.02);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].outcome, "advised");
  EXPECT_EQ(v[0].reference_cap_mb, 25);
  EXPECT_EQ(v[0].chosen_cap_mb, 100);
  EXPECT_EQ(v[0].line.rfind("ADVISE --bucket-cap-mb 100 on mpi:", 0), 0u) << v[0].line;
}

TEST(ReplayVerdict, AGainWithinTheNoiseKeepsTheReference) {
  const auto ref = summarize_launches(launches(25, {130000, 150000, 120000, 140000, 125000}));
  const auto big = summarize_launches(launches(100, {128000, 149000, 121000, 138000, 126000}));
  const auto v = judge_bucket_caps({ref, big}, {}, 0.02);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].outcome, "keep");
  EXPECT_EQ(v[0].chosen_cap_mb, 25);
  EXPECT_EQ(v[0].line.rfind("KEEP --bucket-cap-mb 25 on mpi:", 0), 0u) << v[0].line;
}

TEST(ReplayVerdict, OneLaunchCannotBeJudged) {
  const auto v = judge_bucket_caps({record(5, 100000), record(25, 200000)}, {}, 0.02);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].outcome, "inconclusive");
  EXPECT_EQ(v[0].chosen_cap_mb, 25);
}

TEST(ReplayVerdict, TheReferenceIsDdpsDefaultWhenListedElseTheFirst) {
  EXPECT_EQ(reference_cap({1, 5, 25, 100}), 25);
  EXPECT_EQ(reference_cap({50, 100}), 50);
}

TEST(ReplayVerdict, SummaryTakesMediansOverLaunchesAndKeepsThem) {
  const auto s = summarize_launches(launches(25, {100000, 300000, 200000}));
  EXPECT_DOUBLE_EQ(s.step_us, 200000);
  EXPECT_DOUBLE_EQ(s.exposed_us, 100000);
  EXPECT_EQ(s.launches.size(), 3u);
  EXPECT_FALSE(s.repeat.has_value());
  EXPECT_EQ(s.steps, 30);
  EXPECT_DOUBLE_EQ(s.ops[0].time_us, 199000);
  EXPECT_DOUBLE_EQ(*s.overlap, 1 - 100000.0 / 60000);
}

TEST(ReplayVerdict, WithoutComputeTheSummaryHasNoOverlapEither) {
  // Each launch's step is all host overhead and communication, nothing to hide behind: its
  // overlap is empty, and the median over launches must not make a large negative share of it.
  auto no_compute = launches(25, {200000, 210000, 205000});
  for (auto& l : no_compute) {
    l.compute_us = 0;
    l.exposed_us = l.step_us;
    l.overlap.reset();
  }
  const auto s = summarize_launches(no_compute);
  EXPECT_DOUBLE_EQ(s.exposed_us, 205000);
  EXPECT_FALSE(s.overlap.has_value());
  EXPECT_EQ(replay_answer(s).find("overlap"), std::string::npos) << replay_answer(s);
}

}  // namespace
}  // namespace cb
