#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "common/atomic_file.hpp"
#include "common/environment.hpp"
#include "common/error.hpp"
#include "report/check/check_output.hpp"
#include "report/compare/compare_output.hpp"
#include "report/format/document_output.hpp"
#include "report/format/report_format.hpp"
#include "report/format/writer.hpp"
#include "report/replay/replay_output.hpp"
#include "temp_dir.hpp"

namespace cb {
namespace {

ResultRecord sample_record() {
  ResultRecord r;
  r.backend = "mpi";
  r.library = "Open MPI 4.1.4, \"quoted\"";  // exercises CSV quoting
  r.algorithm = "default";
  r.collective = "allgather";
  r.dtype = "float";
  r.op = "none";
  r.placement = "in";
  r.root = -1;
  r.nranks = 3;
  r.nnodes = 1;
  r.bytes = 12288;
  r.count = 1024;
  r.iters = 777;
  r.time_us = 12.5;
  r.min_us = 10.25;
  r.p50_us = 12;
  r.p99_us = 20.5;
  r.max_us = 31;
  r.cv = 0.125;
  r.algbw_GBps = 0.98304;
  r.busbw_GBps = 0.65536;
  r.wrong = 0;
  return r;
}

RunMeta sample_meta() {
  RunMeta m;
  m.version = "0.1.0";
  m.start_time = "2026-01-01T00:00:00Z";
  m.command_line = "commbench run";
  m.hosts = {"a", "b"};
  m.nranks = 3;
  m.nnodes = 2;
  m.ranks_per_node = 2;
  m.libraries = {{"mpi", "Open MPI 4.1.4"}};
  m.environment = {{"NCCL_ALGO", "ring"}};
  return m;
}

void expect_same(const ResultRecord& a, const ResultRecord& b) {
  EXPECT_EQ(nlohmann::json(a), nlohmann::json(b));
}

TEST(CsvWriter, HeaderIsTheContractAndRowsRoundTrip) {
  std::ostringstream out;
  auto w = make_csv_writer(out);
  w->begin(sample_meta());
  ResultRecord r = sample_record();
  ResultRecord barrier = sample_record();
  barrier.collective = "barrier";
  barrier.algbw_GBps.reset();
  barrier.busbw_GBps.reset();
  barrier.wrong.reset();
  w->add(r);
  w->add(barrier);
  w->finish();
  std::istringstream in(out.str());
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line,
            "backend,library,algorithm,collective,dtype,op,placement,root,nranks,nnodes,bytes,"
            "count,iters,time_us,min_us,p50_us,p99_us,max_us,cv,algbw_GBps,busbw_GBps,wrong,env,"
            "outliers,roof_GBps,efficiency,roof_basis,fault_bytes,outlier_cause,split,incast,"
            "send_skew,imbalance_tax,uniform_us,drop_share,p50_low_us,p50_high_us\r");
  std::getline(in, line);
  line.pop_back();  // CR
  EXPECT_EQ(csv_split(line)[23], has_outliers(r) ? "true" : "false");
  expect_same(record_from_fields(csv_split(line), "row 1"), r);
  std::getline(in, line);
  line.pop_back();
  ResultRecord back = record_from_fields(csv_split(line), "row 2");
  EXPECT_FALSE(back.busbw_GBps.has_value());
  EXPECT_FALSE(back.wrong.has_value());
  EXPECT_FALSE(std::getline(in, line));  // no commentary lines
}

// The `outliers` column and JSON key follow the rule of has_outliers: a mean above 1.5 x p50
// or a p99 above 10 x p50.
TEST(ResultRecordOutliers, ColumnAndKeyFlagNoisyCasesOnly) {
  ResultRecord quiet = sample_record();
  quiet.time_us = 10;
  quiet.p50_us = 9;
  quiet.p99_us = 20;
  ResultRecord slow_mean = quiet;
  slow_mean.time_us = 14;  // > 1.5 x 9
  ResultRecord long_tail = quiet;
  long_tail.p99_us = 91;  // > 10 x 9
  EXPECT_EQ(record_fields(quiet)[23], "false");
  EXPECT_EQ(record_fields(slow_mean)[23], "true");
  EXPECT_EQ(record_fields(long_tail)[23], "true");
  nlohmann::json j = slow_mean;
  EXPECT_EQ(j["outliers"], true);
  EXPECT_EQ(nlohmann::json(quiet)["outliers"], false);
  // Read back from CSV with or without the later columns.
  auto fields = record_fields(slow_mean);
  EXPECT_EQ(record_from_fields(fields, "x").time_us, 14);
  fields.pop_back();
  EXPECT_EQ(record_from_fields(fields, "x").time_us, 14);
  fields.pop_back();
  EXPECT_EQ(record_from_fields(fields, "x").time_us, 14);
}

TEST(CsvSplit, Rfc4180Quoting) {
  EXPECT_EQ(csv_line({"a", "b,c", "d\"e"}), "a,\"b,c\",\"d\"\"e\"");
  auto f = csv_split("a,\"b,c\",\"d\"\"e\",");
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[1], "b,c");
  EXPECT_EQ(f[2], "d\"e");
  EXPECT_EQ(f[3], "");
}

TEST(CsvReader, RejectsBadRows) {
  EXPECT_THROW(record_from_fields({"a", "b"}, "x"), Error);
  auto fields = record_fields(sample_record());
  fields[13] = "fast";
  EXPECT_THROW(record_from_fields(fields, "x"), Error);
  fields = record_fields(sample_record());
  fields[10] = "-5";
  EXPECT_THROW(record_from_fields(fields, "x"), Error);
}

TEST(JsonWriter, DocumentHasSchemaMetaAndResults) {
  std::ostringstream out;
  auto w = make_json_writer(out);
  w->begin(sample_meta());
  w->add(sample_record());
  w->finish();
  auto doc = nlohmann::json::parse(out.str());
  EXPECT_EQ(doc["schema"], "commbench/result/v1");
  EXPECT_EQ(doc["meta"]["nranks"], 3);
  EXPECT_EQ(doc["meta"]["libraries"]["mpi"], "Open MPI 4.1.4");
  EXPECT_EQ(doc["meta"]["environment"]["NCCL_ALGO"], "ring");
  ASSERT_EQ(doc["results"].size(), 1u);
  std::vector<std::string> keys;
  for (auto& [k, v] : doc["results"][0].items()) keys.push_back(k);
  EXPECT_EQ(keys.size(), std::size(kResultColumns));
  expect_same(doc["results"][0].get<ResultRecord>(), sample_record());
  RunMeta back = doc["meta"].get<RunMeta>();
  EXPECT_EQ(back.hosts, sample_meta().hosts);
}

TEST(JsonReader, RejectsWrongTypesAndNegativeValues) {
  nlohmann::json j = sample_record();
  j["time_us"] = "slow";
  EXPECT_THROW(j.get<ResultRecord>(), Error);
  j = sample_record();
  j["p50_us"] = -1.0;
  EXPECT_THROW(j.get<ResultRecord>(), Error);
  j = sample_record();
  j.erase("bytes");
  EXPECT_THROW(j.get<ResultRecord>(), Error);
}

TEST(JsonlWriter, OneFlushedLinePerRecord) {
  std::ostringstream out;
  auto w = make_jsonl_writer(out);
  w->begin(sample_meta());
  w->add(sample_record());
  const std::string early = out.str();
  EXPECT_EQ(std::count(early.begin(), early.end(), '\n'), 1);  // before finish()
  w->add(sample_record());
  w->finish();
  std::istringstream in(out.str());
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    expect_same(nlohmann::json::parse(line).get<ResultRecord>(), sample_record());
    ++n;
  }
  EXPECT_EQ(n, 2);
}

TEST(TableWriter, OneBlockPerCollectiveWithHeader) {
  std::ostringstream out;
  auto w = make_table_writer(out);
  w->begin(sample_meta());
  ResultRecord a = sample_record();
  ResultRecord b = sample_record();
  b.collective = "allreduce";
  w->add(a);
  w->add(b);
  w->finish();
  std::string s = out.str();
  EXPECT_NE(s.find("# commbench 0.1.0 | mpi: Open MPI 4.1.4 | 3 ranks on 2 nodes (a,b)"),
            std::string::npos);
  EXPECT_NE(s.find("# allgather"), std::string::npos);
  EXPECT_NE(s.find("# allreduce"), std::string::npos);
  EXPECT_NE(s.find("12 KiB"), std::string::npos);
  EXPECT_NE(s.find("12.5 us"), std::string::npos);
  EXPECT_NE(s.find("mpi/default in-place"), std::string::npos);
}

TEST(TableWriter, EndsWithASummaryPerBackendAndAlgorithm) {
  std::ostringstream out;
  auto w = make_table_writer(out);
  w->begin(sample_meta());
  ResultRecord small = sample_record();  // 12 KiB, busbw 0.66
  ResultRecord big = sample_record();
  big.bytes = 4 << 20;
  big.busbw_GBps = 3.0;
  big.wrong = 2;
  ResultRecord bigger = big;
  bigger.bytes = 8 << 20;
  bigger.busbw_GBps = 5.0;
  bigger.wrong = 1;
  ResultRecord other = sample_record();
  other.backend = "gloo";
  other.collective = "allreduce";
  other.busbw_GBps = 1.25;
  for (const auto& r : {small, big, bigger, other}) w->add(r);
  w->finish();
  const std::string s = out.str();
  EXPECT_NE(s.find("# summary mpi/default: peak busbw (GB/s) allgather 5.00; avg busbw >= 1 MiB "
                   "4.00 GB/s; #wrong 3\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("# summary gloo/default: peak busbw (GB/s) allreduce 1.25; avg busbw >= 1 MiB "
                   "-; #wrong 0\n"),
            std::string::npos)
      << s;
  EXPECT_EQ(s.find("outliers"), std::string::npos) << s;
}

TEST(TableWriter, WarnsAboutCasesWithOutliers) {
  ResultRecord steady = sample_record();  // mean 12.5, p50 12, p99 20.5
  ResultRecord mean_high = sample_record();
  mean_high.time_us = 722;
  mean_high.p50_us = 235;
  ResultRecord tail_high = sample_record();
  tail_high.p99_us = 121;
  EXPECT_FALSE(has_outliers(steady));
  EXPECT_TRUE(has_outliers(mean_high));
  EXPECT_TRUE(has_outliers(tail_high));
  std::ostringstream out;
  auto w = make_table_writer(out);
  w->begin(sample_meta());
  for (const auto& r : {steady, mean_high, tail_high}) w->add(r);
  w->finish();
  EXPECT_NE(out.str().find("# warning: 2 of 3 cases had outliers (mean > 1.5 x p50 or p99 > 10 x "
                           "p50)"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("raise --min-time"), std::string::npos);
}

TEST(TableWriter, OutlierWarningCountsEachCause) {
  ResultRecord faulted = sample_record();
  faulted.p99_us = 121;
  faulted.outlier_cause = kPageFaultCause;
  faulted.fault_bytes = 49152;
  ResultRecord preempted = faulted;
  preempted.outlier_cause = kPreemptedCause;
  ResultRecord steady = faulted;
  steady.outlier_cause = kSteadyCause;
  ResultRecord unknown = faulted;
  unknown.outlier_cause = "";
  std::ostringstream out;
  auto w = make_table_writer(out);
  w->begin(sample_meta());
  for (const auto& r : {faulted, preempted, preempted, steady, unknown}) w->add(r);
  w->finish();
  const std::string text = out.str();
  EXPECT_NE(text.find("# warning: 4 of 5 cases had outliers (mean > 1.5 x p50 or p99 > 10 x p50): "
                      "1 in timed batches that took page faults (up to 48 KiB per call"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("; 2 in timed batches where a rank was preempted"), std::string::npos);
  EXPECT_NE(text.find("; 1 with no cause seen in the process"), std::string::npos) << text;
  EXPECT_NE(text.find("# note: 1 of 5 cases had slow calls in every timed batch, with neither page "
                      "faults nor preemption (outlier_cause \"in every batch\": the library's own "
                      "rhythm"),
            std::string::npos)
      << text;
}

// The CSV writer's row for `r`, its line end dropped.
std::string first_csv_row(const ResultRecord& r) {
  std::ostringstream out;
  auto w = make_csv_writer(out);
  w->begin(sample_meta());
  w->add(r);
  w->finish();
  std::istringstream in(out.str());
  std::string line;
  std::getline(in, line);  // the header
  std::getline(in, line);
  line.pop_back();  // CR
  return line;
}

// Slow calls at the library's own rhythm are its figure, not outliers: the `outliers` column
// says false for them, the table notes them apart, and a run with only those has no warning.
TEST(TableWriter, TheLibrarysRhythmIsNotAnOutlier) {
  ResultRecord rhythm = sample_record();
  rhythm.p99_us = 121;
  rhythm.outlier_cause = kSteadyCause;
  EXPECT_TRUE(shows_slow_calls(rhythm));
  EXPECT_FALSE(has_outliers(rhythm));
  ResultRecord burst = rhythm;
  burst.outlier_cause = "";
  EXPECT_TRUE(has_outliers(burst));
  EXPECT_EQ(csv_split(first_csv_row(rhythm))[23], "false");
  EXPECT_EQ(csv_split(first_csv_row(burst))[23], "true");
  std::ostringstream out;
  auto w = make_table_writer(out);
  w->begin(sample_meta());
  w->add(rhythm);
  w->finish();
  EXPECT_EQ(out.str().find("# warning:"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("# note: 1 of 1 case had slow calls in every timed batch"),
            std::string::npos)
      << out.str();
}

TEST(FileWriter, ExtensionPicksFormatAndBadOnesAreUsageErrors) {
  EXPECT_THROW(check_output_path("results.xlsx"), Error);
  EXPECT_THROW(check_output_path("/nonexistent-dir/x.csv"), Error);
  EXPECT_NO_THROW(check_output_path("x.csv"));
  EXPECT_THROW(make_stream_writer("yaml", std::cout), Error);
}

TEST(FileWriter, NothingAppearsUntilFinished) {
  TempDir dir;
  std::string path = dir / "r.json";
  {
    auto w = make_file_writer(path);
    w->begin(sample_meta());
    w->add(sample_record());
    EXPECT_FALSE(std::filesystem::exists(path));
    // Destroyed without finish(): no file and no temporary left behind.
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
  {
    auto w = make_file_writer(path);
    w->begin(sample_meta());
    w->add(sample_record());
    w->finish();
  }
  std::ifstream in(path);
  EXPECT_EQ(nlohmann::json::parse(in)["results"].size(), 1u);
}

// A .jsonl file is readable line by line while the run goes on: what a crash leaves is every
// finished case. Read through a second stream, as another process would.
TEST(FileWriter, JsonlRecordsReachTheFileBeforeFinish) {
  TempDir dir;
  std::string path = dir / "r.jsonl";
  auto w = make_file_writer(path);
  w->begin(sample_meta());
  auto lines_on_disk = [&] {
    std::ifstream in(path);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      expect_same(nlohmann::json::parse(line).get<ResultRecord>(), sample_record());
      ++n;
    }
    return n;
  };
  w->add(sample_record());
  EXPECT_EQ(lines_on_disk(), 1);
  w->add(sample_record());
  EXPECT_EQ(lines_on_disk(), 2);
  w->finish();
  EXPECT_EQ(lines_on_disk(), 2);
}

// A .jsonl appears with its first record: a run that fails before one leaves no file (as it
// leaves no .json), a whole run with none an empty one, and a run that fails after some ends
// with the mark that readers take as incomplete.
TEST(FileWriter, JsonlAppearsWithItsFirstRecordAndIsMarkedWhenAbandoned) {
  TempDir dir;
  const std::string none = dir / "none.jsonl", empty = dir / "empty.jsonl",
                    part = dir / "part.jsonl";
  {
    auto w = make_file_writer(none);
    w->begin(sample_meta());
    w->abandon(1, "rank 1 was killed by signal 9");
  }
  EXPECT_FALSE(std::filesystem::exists(none));
  {
    auto w = make_file_writer(empty);
    w->begin(sample_meta());
    EXPECT_FALSE(std::filesystem::exists(empty));
    w->finish();
  }
  ASSERT_TRUE(std::filesystem::exists(empty));
  EXPECT_EQ(std::filesystem::file_size(empty), 0u);
  {
    auto w = make_file_writer(part);
    w->begin(sample_meta());
    w->add(sample_record());
    w->abandon(4, "repetition 2 of 3: timed out");
  }
  std::ifstream in(part);
  std::string record, mark, more;
  ASSERT_TRUE(std::getline(in, record) && std::getline(in, mark));
  EXPECT_FALSE(std::getline(in, more));
  expect_same(nlohmann::json::parse(record).get<ResultRecord>(), sample_record());
  EXPECT_EQ(
      nlohmann::json::parse(mark),
      (nlohmann::json{
          {"incomplete", true}, {"exit_code", 4}, {"reason", "repetition 2 of 3: timed out"}}));
}

// Formats written at the end write nothing when abandoned.
TEST(FileWriter, AbandonedDocumentsLeaveNoFile) {
  TempDir dir;
  for (const char* name : {"r.json", "r.csv", "r.md"}) {
    auto w = make_file_writer(dir / name);
    w->begin(sample_meta());
    w->add(sample_record());
    w->abandon(1, "failed");
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

// Only variables that steer communication are recorded, and never one whose name looks like a
// secret, even where a steering prefix matches it.
TEST(SteeringEnvironment, KeepsSteeringVariablesAndDropsSecrets) {
  const std::vector<std::pair<std::string, std::string>> vars = {
      {"NCCL_ALGO", "ring"},
      {"NCCL_API_KEY", "hunter2"},
      {"UCX_AUTH_TOKEN", "hunter3"},
      {"OMPI_MCA_SECRET_X", "hunter4"},
      {"MPICH_PASSWORD", "hunter5"},
      {"FI_CREDENTIALS", "hunter6"},
      {"MALLOC_TRIM_THRESHOLD_", "1073741824"},
      {"CB_NOT_STEERING", "nothing"}};
  for (const auto& [k, v] : vars) ::setenv(k.c_str(), v.c_str(), 1);
  auto env = steering_environment();
  for (const auto& [k, v] : vars) ::unsetenv(k.c_str());
  EXPECT_EQ(env["NCCL_ALGO"], "ring");
  EXPECT_EQ(env["MALLOC_TRIM_THRESHOLD_"], "1073741824");  // glibc's allocator: see docs/check.md
  for (const auto& [k, v] : env) EXPECT_EQ(v.find("hunter"), std::string::npos) << k;
  EXPECT_FALSE(env.contains("NCCL_API_KEY"));
  EXPECT_FALSE(env.contains("CB_NOT_STEERING"));
}

// The one table of formats: each subcommand is offered exactly the formats its writers' table
// has a row for, and an --output path picks its format by the longest extension among those.
TEST(FormatTable, EachSubcommandGetsTheFormatsThatCanWriteIt) {
  using V = std::vector<std::string>;
  EXPECT_EQ(kRecordsFormats.names(), (V{"table", "csv", "json", "jsonl", "md", "gbench"}));
  EXPECT_EQ(stdout_formats(), (V{"table", "csv", "json", "md", "gbench"}));  // jsonl: files only
  EXPECT_EQ(kCompareFormats.names(), (V{"table", "csv", "json", "md"}));
  EXPECT_EQ(kCheckFormats.names(), (V{"table", "json", "md"}));
  EXPECT_EQ(kReplayFormats.names(), (V{"table", "csv", "json"}));
  EXPECT_EQ(kReplayFormats.extensions(), (V{".txt", ".csv", ".json"}));
  EXPECT_EQ(document_formats(), (V{"table", "json"}));
  EXPECT_EQ(document_extensions(), (V{".txt", ".json"}));
  EXPECT_EQ(kRecordsFormats.for_path("r.gbench.json").format, "gbench");
  EXPECT_EQ(kCompareFormats.for_path("r.gbench.json").format, "json");
  EXPECT_TRUE(is_streamed_output("r.jsonl"));
  EXPECT_TRUE(kCompareFormats.named("csv").records_only);
  EXPECT_THROW(kCheckFormats.for_path("r.csv"), Error);
  EXPECT_THROW(kCompareFormats.named("jsonl"), Error);
  EXPECT_EQ(kRecordsFormats.find_for_path("r.yaml"), nullptr);
}

// A launcher prefix passes secrets to the ranks in the command line that every output records.
TEST(RedactSecretValues, ReplacesSecretAssignmentsOnly) {
  EXPECT_EQ(redact_secret_values("mpirun -x GLOO_AUTH_TOKEN=abc -x NCCL_ALGO=ring -np 2"),
            "mpirun -x GLOO_AUTH_TOKEN=*** -x NCCL_ALGO=ring -np 2");
  EXPECT_EQ(redact_secret_values("--launch 'API_KEY=abc mpirun -np 2'"),
            "--launch 'API_KEY=*** mpirun -np 2'");
  EXPECT_EQ(redact_secret_values("srun --export=ALL,my_password=abc -n 2"),
            "srun --export=ALL,my_password=*** -n 2");
  EXPECT_EQ(redact_secret_values("mpirun -x SECRET=\"a b\" -np 2"), "mpirun -x SECRET=*** -np 2");
  EXPECT_EQ(redact_secret_values("mpiexec -genv HF_TOKEN abc -n 2"),
            "mpiexec -genv HF_TOKEN *** -n 2");
  EXPECT_EQ(redact_secret_values("run --output KEYS/r.json -x TOKEN"),
            "run --output KEYS/r.json -x TOKEN");
  EXPECT_EQ(redact_secret_values("x --nameKEY=1"), "x --nameKEY=1");
}

}  // namespace
}  // namespace cb
