#include <gtest/gtest.h>

#include <cctype>
#include <sstream>
#include <string>

#include "common/error.hpp"
#include "report/format/result_reader.hpp"
#include "report/format/writer.hpp"
#include "report_fixtures.hpp"

namespace cb {
namespace {

using test::result_fixture;

TEST(ResultReader, ReadsTheSameRecordsFromJsonJsonlAndCsv) {
  ResultFile json = read_result_file(result_fixture("base.json"));
  ResultFile jsonl = read_result_file(result_fixture("base.jsonl"));
  ResultFile csv = read_result_file(result_fixture("base.csv"));
  EXPECT_EQ(json.format, "json");
  EXPECT_EQ(jsonl.format, "jsonl");
  EXPECT_EQ(csv.format, "csv");
  ASSERT_EQ(json.records.size(), 7u);
  ASSERT_EQ(jsonl.records.size(), json.records.size());
  ASSERT_EQ(csv.records.size(), json.records.size());
  for (std::size_t i = 0; i < json.records.size(); ++i) {
    const auto& a = json.records[i];
    for (const ResultRecord* b : {&jsonl.records[i], &csv.records[i]}) {
      EXPECT_EQ(a.collective, b->collective);
      EXPECT_EQ(a.bytes, b->bytes);
      EXPECT_EQ(a.root, b->root);
      EXPECT_NEAR(a.time_us, b->time_us, a.time_us * 1e-5);
      EXPECT_EQ(a.busbw_GBps.has_value(), b->busbw_GBps.has_value());
      EXPECT_EQ(a.wrong, b->wrong);
    }
  }
  EXPECT_EQ(json.records.back().collective, "barrier");
  EXPECT_FALSE(json.records.back().busbw_GBps);
}

TEST(ResultReader, OnlyJsonDocumentsCarryMeta) {
  ResultFile json = read_result_file(result_fixture("base.json"));
  ASSERT_TRUE(json.meta);
  EXPECT_EQ(json.meta->hosts, std::vector<std::string>{"ci-node-a"});
  EXPECT_EQ(json.meta_json["topology"]["fingerprint"], "3f2a9c01d4e5b6a7");
  EXPECT_FALSE(read_result_file(result_fixture("base.csv")).meta);
  EXPECT_FALSE(read_result_file(result_fixture("base.jsonl")).meta);
}

// A .jsonl whose run failed part way keeps its records and says where and why it stopped;
// check and compare refuse it, naming the file, the line of the mark, the exit code and why.
TEST(ResultReader, IncompleteJsonlKeepsItsRecordsAndIsRefusedByJudges) {
  ResultFile whole = read_result_file(result_fixture("base.jsonl"));
  EXPECT_EQ(whole.incomplete, "");
  EXPECT_NO_THROW(require_complete(whole, "check"));

  ResultFile part = read_result_file(result_fixture("incomplete.jsonl"));
  EXPECT_EQ(part.records.size(), 3u);
  EXPECT_NE(part.incomplete.find("incomplete.jsonl:4"), std::string::npos) << part.incomplete;
  EXPECT_NE(part.incomplete.find("with exit 1"), std::string::npos) << part.incomplete;
  try {
    require_complete(part, "check");
    FAIL() << "an incomplete file passed";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    const std::string what = e.what();
    EXPECT_NE(what.find("incomplete results"), std::string::npos) << what;
    EXPECT_NE(what.find("repetition 2 of 3: rank 1 was killed by signal 9"), std::string::npos)
        << what;
    EXPECT_NE(what.find("check judges only whole runs"), std::string::npos) << what;
  }
}

// The mark written by the JSONL writer is the one the reader takes, wherever it stands.
TEST(ResultReader, ReadsTheMarkTheJsonlWriterWrites) {
  std::ostringstream out;
  auto w = make_jsonl_writer(out);
  w->begin(RunMeta{});
  w->abandon(4, "timed out");
  ResultFile f = parse_result_text(out.str(), "r.jsonl");
  EXPECT_TRUE(f.records.empty());
  EXPECT_EQ(f.incomplete, "r.jsonl:1: the run that wrote it failed with exit 4 (timed out)");
}

// Each bad input is a usage error (exit 2) whose one line names the file and the problem.
struct BadInput {
  const char* file;
  const char* says;
};

class ResultReaderBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(ResultReaderBadInput, IsAUsageErrorNamingFileAndProblem) {
  const BadInput& bad = GetParam();
  try {
    read_result_file(result_fixture(bad.file));
    FAIL() << bad.file << " was accepted";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(msg.find(bad.file), std::string::npos) << msg;
    EXPECT_NE(msg.find(bad.says), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, ResultReaderBadInput,
    ::testing::Values(BadInput{"bad-empty.json", "file is empty"},
                      BadInput{"bad-truncated.json", "not valid JSON"},
                      BadInput{"bad-not-json.json", "not valid JSON"},
                      BadInput{"bad-schema.json", "unknown schema 'commbench/result/v2'"},
                      BadInput{"bad-negative.json", "'time_us' has invalid value -20"},
                      BadInput{"bad-nan.json", "not valid JSON"},
                      BadInput{"bad-nan.csv", "'time_us' 'nan'"},
                      BadInput{"bad-truncated.jsonl", "bad-truncated.jsonl:4"},
                      BadInput{"bad-header.csv", "not the commbench CSV header"},
                      BadInput{"no-such-file.json", "No such file"}),
    // Named after the file (bad_truncated_jsonl), so ctest names are stable and usable with -R.
    [](const ::testing::TestParamInfo<BadInput>& info) {
      std::string name = info.param.file;
      for (char& c : name) {
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      }
      return name;
    });

TEST(ResultReader, TellsTheFormatByContentWhenTheExtensionIsUnknown) {
  std::ostringstream doc;
  auto w = make_json_writer(doc);
  RunMeta meta;
  meta.version = "0.1.0";
  w->begin(meta);
  ResultRecord r;
  r.backend = "mpi";
  r.collective = "allreduce";
  r.bytes = 1024;
  r.time_us = 2;
  r.busbw_GBps = 0.5;
  w->add(r);
  w->finish();
  ResultFile f = parse_result_text(doc.str(), "results.out");
  EXPECT_EQ(f.format, "json");
  ASSERT_EQ(f.records.size(), 1u);
  EXPECT_EQ(f.records[0].bytes, 1024u);

  std::ostringstream lines;
  auto l = make_jsonl_writer(lines);
  l->begin(meta);
  l->add(r);
  l->add(r);
  l->finish();
  EXPECT_EQ(parse_result_text(lines.str(), "results.out").format, "jsonl");

  std::ostringstream csv;
  auto c = make_csv_writer(csv);
  c->begin(meta);
  c->add(r);
  c->finish();
  EXPECT_EQ(parse_result_text(csv.str(), "results.out").records.size(), 1u);
}

TEST(ResultReader, RefusesGoogleBenchmarkOutput) {
  EXPECT_THROW(parse_result_text("{\"context\": {}, \"benchmarks\": []}", "x.gbench.json"), Error);
}

TEST(ResultReader, FileLabelDropsDirectoryAndExtension) {
  EXPECT_EQ(file_label("/tmp/run/nightly.json"), "nightly");
  EXPECT_EQ(file_label("a.jsonl"), "a");
  EXPECT_EQ(file_label("dir/b.csv"), "b");
  EXPECT_EQ(file_label("plain"), "plain");
}

}  // namespace
}  // namespace cb
