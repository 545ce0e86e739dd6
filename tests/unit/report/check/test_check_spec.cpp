#include <gtest/gtest.h>

#include "common/error.hpp"
#include "report/check/check_spec.hpp"
#include "report_fixtures.hpp"

namespace cb {
namespace {

// A small vocabulary standing in for the catalogue: allreduce (alias all_reduce) and barrier.
SpecVocabulary vocabulary() {
  SpecVocabulary v;
  v.collective = [](std::string_view n) -> std::optional<std::string> {
    if (n == "allreduce" || n == "all_reduce") return std::string("allreduce");
    if (n == "barrier") return std::string("barrier");
    return std::nullopt;
  };
  v.collective_names = "allreduce, barrier";
  return v;
}

// The usage error's one-line message, or "" when the spec was accepted.
std::string error_of(const std::string& text) {
  try {
    parse_spec(text, "spec.toml", vocabulary());
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    return e.what();
  }
  return "";
}

TEST(CheckSpec, ExampleSpecsParse) {
  Spec dgx = read_spec(test::example_spec("dgx-h100.toml"));
  EXPECT_EQ(dgx.name, "dgx-h100");
  ASSERT_EQ(dgx.results.size(), 2u);
  const ResultRequirement& ar = dgx.results[0];
  EXPECT_EQ(ar.collective, "allreduce");
  EXPECT_EQ(ar.backend, "nccl");
  EXPECT_EQ(ar.nranks, 8);
  EXPECT_EQ(ar.min_bytes, 16ULL << 30);
  EXPECT_EQ(ar.max_bytes, 16ULL << 30);
  EXPECT_EQ(ar.min_busbw_GBps, 460);
  EXPECT_EQ(ar.severity, Severity::Error);
  EXPECT_EQ(dgx.results[1].severity, Severity::Warning);
  ASSERT_EQ(dgx.topology.size(), 6u);
  EXPECT_EQ(dgx.topology[0].gpus, 8);
  EXPECT_EQ(dgx.topology[0].numa_nodes, 2);
  EXPECT_TRUE(dgx.topology[1].nvlink_all_up);
  EXPECT_EQ(dgx.topology[2].pcie_min_gts, 32);
  EXPECT_EQ(dgx.topology[2].pcie_min_width, 16);
  EXPECT_EQ(dgx.topology[3].ib_ports_active_min_gbps, 400);
  EXPECT_TRUE(dgx.topology[4].gdr);
  EXPECT_TRUE(dgx.topology[5].no_warnings);

  Spec ci = read_spec(test::example_spec("ci-machine.toml"));
  ASSERT_EQ(ci.results.size(), 2u);
  EXPECT_EQ(ci.results[0].backend, "mpi");
  EXPECT_EQ(ci.results[1].max_time_us, 100);
  ASSERT_EQ(ci.topology.size(), 1u);
  EXPECT_EQ(ci.topology[0].gpus, 0);
}

TEST(CheckSpec, UnknownKeyIsNamedWithItsLine) {
  std::string e =
      error_of("[[results]]\ncollective = \"allreduce\"\nmin_busbw_GBps = 1\n\nmin_busbw = 2\n");
  EXPECT_NE(e.find("spec.toml:5: unknown key 'min_busbw' in [[results]]"), std::string::npos) << e;
  EXPECT_NE(e.find("expected one of name, collective"), std::string::npos) << e;
  e = error_of("[[topology]]\ngpus = 8\nnvlinks = true\n");
  EXPECT_NE(e.find("spec.toml:3: unknown key 'nvlinks' in [[topology]]"), std::string::npos) << e;
  e = error_of("title = \"x\"\n[[topology]]\ngpus = 8\n");
  EXPECT_NE(e.find("spec.toml:1: unknown key 'title' at top level"), std::string::npos) << e;
}

TEST(CheckSpec, TheFirstUnknownKeyByLineIsReported) {
  std::string e =
      error_of("[[results]]\ncollective = \"allreduce\"\nzz = 1\nmin_busbw_GBps = 1\naa = 2\n");
  EXPECT_NE(e.find(":3: unknown key 'zz'"), std::string::npos) << e;
}

TEST(CheckSpec, ValuesAreCheckedWithTheirLine) {
  EXPECT_NE(error_of("[[results]]\ncollective = \"allreduce\"\nmin_busbw_GBps = \"fast\"\n")
                .find("spec.toml:3: 'min_busbw_GBps' in [[results]] must be a number"),
            std::string::npos);
  EXPECT_NE(error_of("[[results]]\ncollective = \"allreduce\"\nmin_busbw_GBps = -1\n")
                .find(":3: 'min_busbw_GBps' in [[results]] must be a finite number > 0"),
            std::string::npos);
  EXPECT_NE(error_of("[[results]]\ncollective = \"allreduce\"\nmax_time_us = nan\n")
                .find(":3: 'max_time_us'"),
            std::string::npos);
  EXPECT_NE(
      error_of("[[results]]\ncollective = \"allreduce\"\nmax_time_us = 5\nseverity = \"fatal\"\n")
          .find(":4: 'severity' in [[results]] must be \"error\" or \"warning\""),
      std::string::npos);
  EXPECT_NE(
      error_of("[[results]]\ncollective = \"allreduce\"\nmax_time_us = 5\nmin_bytes = \"1Q\"\n")
          .find(":4: 'min_bytes'"),
      std::string::npos);
  EXPECT_NE(error_of("[[topology]]\ngpus = -2\n")
                .find(":2: 'gpus' in [[topology]] must be an integer >= 0"),
            std::string::npos);
  EXPECT_NE(
      error_of("[[topology]]\ngdr = 1\n").find(":2: 'gdr' in [[topology]] must be true or false"),
      std::string::npos);
  EXPECT_NE(error_of("[[results]]\ncollective = \"allgatherv\"\nmax_time_us = 5\n")
                .find(":2: unknown collective 'allgatherv' in [[results]]: expected one of "
                      "allreduce, barrier"),
            std::string::npos);
}

TEST(CheckSpec, RequirementsMustBeComplete) {
  EXPECT_NE(error_of("[[results]]\nmin_busbw_GBps = 1\n")
                .find("spec.toml:1: [[results]] needs 'collective'"),
            std::string::npos);
  EXPECT_NE(error_of("[[results]]\ncollective = \"allreduce\"\n").find("needs a limit"),
            std::string::npos);
  EXPECT_NE(
      error_of("[[results]]\ncollective = \"barrier\"\nmin_busbw_GBps = 1\n").find("moves no data"),
      std::string::npos);
  EXPECT_NE(error_of("[[results]]\ncollective = \"allreduce\"\nmax_time_us = 1\nmin_bytes = "
                     "\"1M\"\nmax_bytes = \"1K\"\n")
                .find("min_bytes 1 MiB is larger than max_bytes 1 KiB"),
            std::string::npos);
  EXPECT_NE(error_of("[[topology]]\nname = \"empty\"\n").find("asks for nothing"),
            std::string::npos);
  EXPECT_NE(error_of("# nothing\n").find("no requirements"), std::string::npos);
  EXPECT_NE(error_of("[results]\ncollective = \"allreduce\"\n")
                .find("must be an array of tables, written [[results]]"),
            std::string::npos);
}

TEST(CheckSpec, SyntaxErrorsGiveLineAndReasonOnOneLine) {
  std::string e = error_of("[[results]]\ncollective = \n");
  EXPECT_NE(e.find("spec.toml:2: invalid TOML:"), std::string::npos) << e;
  e = error_of("[[results]]\ncollective = \"a\"\ncollective = \"b\"\n");
  EXPECT_NE(e.find("spec.toml:3: invalid TOML:"), std::string::npos) << e;
}

TEST(CheckSpec, SizesFiltersAndDefaults) {
  Spec s = parse_spec(
      "name = \"mine\"\n"
      "[[results]]\ncollective = \"all_reduce\"\nmin_bytes = 1024\nmax_bytes = \"4M\"\n"
      "max_p99_us = 50\nplacement = \"in\"\ndtype = \"half\"\n",
      "spec.toml", vocabulary());
  EXPECT_EQ(s.name, "mine");
  const ResultRequirement& r = s.results[0];
  EXPECT_EQ(r.collective, "allreduce");  // alias canonicalised
  EXPECT_EQ(r.min_bytes, 1024u);
  EXPECT_EQ(r.max_bytes, 4u << 20);
  EXPECT_EQ(r.max_p99_us, 50);
  EXPECT_EQ(r.placement, "in");
  EXPECT_EQ(r.dtype, "half");  // no dtype vocabulary given: accepted as written
  EXPECT_EQ(r.line, 2);
  EXPECT_EQ(r.name, "allreduce 1 KiB..4 MiB p99 <= 50 us");
  EXPECT_EQ(r.severity, Severity::Error);
}

TEST(CheckSpec, MissingSpecFileIsAUsageError) {
  EXPECT_THROW(read_spec("/nonexistent/spec.toml"), Error);
}

}  // namespace
}  // namespace cb
