#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "report/format/markdown.hpp"
#include "report/format/result_reader.hpp"
#include "report/format/writer.hpp"
#include "report_fixtures.hpp"
#include "temp_dir.hpp"

namespace cb {
namespace {

// Writes base.json's records through `w` and returns what it produced.
void feed(Writer& w) {
  ResultFile f = read_result_file(test::result_fixture("base.json"));
  w.begin(*f.meta);
  for (const auto& r : f.records) w.add(r);
  w.finish();
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(MarkdownWriter, OneTablePerCollectiveWithHeadingFromMeta) {
  std::ostringstream out;
  auto w = make_markdown_writer(out);
  feed(*w);
  std::string s = out.str();
  EXPECT_EQ(s.rfind("### commbench 0.1.0 · mpi: Open MPI 4.1.4 · 2 ranks on 1 node (ci-node-a)", 0),
            0u)
      << s;
  EXPECT_NE(s.find("#### allreduce"), std::string::npos);
  EXPECT_NE(s.find("#### broadcast"), std::string::npos);
  EXPECT_NE(s.find("#### barrier"), std::string::npos);
  EXPECT_NE(s.find("| size | count | type | redop | root | backend/algorithm |"),
            std::string::npos);
  EXPECT_NE(s.find("| 1 MiB | 262144 | float | sum | - | mpi/default | out | 200 us |"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("| - | - | N/A |"), std::string::npos);  // barrier: no bandwidth, unchecked
}

TEST(MarkdownWriter, EscapesTableBreakingCharacters) {
  EXPECT_EQ(md_escape("a|b_c*d"), "a\\|b\\_c\\*d");
  EXPECT_EQ(md_code("run `x`"), "`run 'x'`");
}

TEST(GbenchWriter, GoogleBenchmarkShape) {
  std::ostringstream out;
  auto w = make_gbench_writer(out);
  feed(*w);
  auto doc = nlohmann::json::parse(out.str());
  EXPECT_EQ(doc["context"]["executable"], "commbench");
  EXPECT_EQ(doc["context"]["nranks"], 2);
  auto& b = doc["benchmarks"];
  ASSERT_EQ(b.size(), 7u);
  EXPECT_EQ(b[0]["name"], "allreduce/mpi/default/float/sum/out/8");
  EXPECT_EQ(b[0]["run_name"], b[0]["name"]);
  EXPECT_EQ(b[0]["run_type"], "iteration");
  EXPECT_EQ(b[0]["time_unit"], "us");
  EXPECT_DOUBLE_EQ(b[0]["real_time"].get<double>(), 0.4);
  EXPECT_DOUBLE_EQ(b[0]["cpu_time"].get<double>(), 0.4);
  EXPECT_GT(b[0]["iterations"].get<int>(), 0);
  EXPECT_DOUBLE_EQ(b[3]["bytes_per_second"].get<double>(), 1048576.0 / 200e-6);
  EXPECT_DOUBLE_EQ(b[3]["busbw_GBps"].get<double>(), 1048576.0 / 200.0 / 1e3);
  EXPECT_EQ(b[3]["family_index"], 0);
  EXPECT_EQ(b[3]["per_family_instance_index"], 3);
  EXPECT_EQ(b[5]["name"], "broadcast/mpi/default/float/none/out/root:0/1048576");
  EXPECT_EQ(b[5]["family_index"], 1);
  EXPECT_EQ(b[6]["name"], "barrier/mpi/default/none/none/none/0");
  EXPECT_FALSE(b[6].contains("bytes_per_second"));
  EXPECT_FALSE(b[6].contains("wrong"));  // not checked
}

TEST(Writers, OutputExtensionPicksTheWriterLongestFirst) {
  TempDir dir;
  std::string gbench = dir / "x.gbench.json";
  std::string json = dir / "x.json";
  std::string md = dir / "x.md";
  for (const auto& path : {gbench, json, md}) {
    auto w = make_file_writer(path);
    feed(*w);
  }
  EXPECT_TRUE(nlohmann::json::parse(slurp(gbench)).contains("benchmarks"));
  EXPECT_EQ(nlohmann::json::parse(slurp(json))["schema"], "commbench/result/v1");
  EXPECT_EQ(slurp(md).rfind("### commbench", 0), 0u);
  auto formats = stdout_formats();
  EXPECT_NE(std::find(formats.begin(), formats.end(), "md"), formats.end());
  EXPECT_NE(std::find(formats.begin(), formats.end(), "gbench"), formats.end());
}

}  // namespace
}  // namespace cb
