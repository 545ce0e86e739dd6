// Environment grids for tune --env: axes, escapes for commas, the grid file, combinations, the
// record label, and checking that every rank saw the same variables.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "common/environment.hpp"
#include "common/error.hpp"
#include "report/tune/env_grid.hpp"

namespace cb {
namespace {

TEST(EnvGrid, AxisValuesWithEscapedCommas) {
  EnvAxis a = parse_env_axis("OMPI_MCA_btl=self\\,vader,self\\,tcp,a\\\\b");
  EXPECT_EQ(a.name, "OMPI_MCA_btl");
  EXPECT_EQ(a.values, (std::vector<std::string>{"self,vader", "self,tcp", "a\\b"}));
  EXPECT_EQ(parse_env_axis("NCCL_BUFFSIZE=4194304").values.size(), 1u);
}

TEST(EnvGrid, BadAxesAreUsageErrors) {
  EXPECT_THROW(parse_env_axis("NCCL_BUFFSIZE"), Error);         // no '='
  EXPECT_THROW(parse_env_axis("HOME=/tmp"), Error);             // not recorded in meta
  EXPECT_THROW(parse_env_axis("NCCL_X=1,1"), Error);            // repeated value
  EXPECT_THROW(parse_env_axis("1NCCL=2"), Error);               // not a name
  EXPECT_THROW(parse_env_axis("NCCL_IB_SECRET_KEY=1"), Error);  // looks secret: never recorded
}

TEST(EnvGrid, CartesianProductFirstAxisSlowest) {
  auto c = env_combinations({{"NCCL_A", {"1", "2"}}, {"NCCL_B", {"x", "y", "z"}}});
  ASSERT_EQ(c.size(), 6u);
  EXPECT_EQ(env_label(c[0]), "NCCL_A=1 NCCL_B=x");
  EXPECT_EQ(env_label(c[5]), "NCCL_A=2 NCCL_B=z");
  EXPECT_EQ(env_label({}), "");
  EXPECT_THROW(env_combinations({{"NCCL_A", {"1"}}, {"NCCL_A", {"2"}}}), Error);
}

EnvAxis axis_of(const std::string& name, std::size_t values) {
  EnvAxis a{name, {}};
  for (std::size_t i = 0; i < values; ++i) a.values.push_back(std::to_string(i));
  return a;
}

TEST(EnvGrid, CombinationsAreCountedBeforeTheyAreBuilt) {
  EXPECT_EQ(env_combination_count({}), 1u);
  EXPECT_EQ(env_combination_count({axis_of("NCCL_A", 100), axis_of("NCCL_B", 100)}), 10000u);
  // The product saturates rather than wrapping around.
  std::vector<EnvAxis> huge(7, axis_of("NCCL_A", 1000));
  EXPECT_EQ(env_combination_count(huge), UINT64_MAX);
  // At the bound the grid is built; one value beyond it is refused.
  EXPECT_EQ(env_combinations({axis_of("NCCL_A", 100), axis_of("NCCL_B", 100)}).size(),
            kMaxEnvCombinations);
  try {
    env_combinations({axis_of("NCCL_A", 101), axis_of("NCCL_B", 100)});
    FAIL() << "a grid beyond the bound was built";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("10100 combinations (101 x 100 values)"),
              std::string::npos)
        << e.what();
  }
}

ResultRecord measured(const std::string& collective, int nranks, std::uint64_t bytes) {
  ResultRecord r;
  r.backend = "mpi";
  r.collective = collective;
  r.algorithm = "default";
  r.nranks = nranks;
  r.bytes = bytes;
  return r;
}

TEST(EnvGrid, ResumedRecordsOfAnotherSweepAreNamed) {
  auto collective = [](const ResultRecord& r) { return r.collective; };
  auto ranks = [](const ResultRecord& r) { return std::to_string(r.nranks); };
  const std::vector<ResultRecord> records = {measured("allreduce", 2, 8),
                                             measured("allreduce", 2, 64)};
  EXPECT_EQ(sweep_difference(records, {{"collectives", collective, {"allreduce"}, {}},
                                       {"ranks", ranks, {"2"}, {}}}),
            "");
  EXPECT_EQ(
      sweep_difference(records, {{"collectives", collective, {"allreduce", "broadcast"}, {}}}),
      "collectives: the file measured allreduce, this sweep measures allreduce,broadcast");
  EXPECT_EQ(sweep_difference(records, {{"ranks", ranks, {"4"}, {}}}),
            "ranks: the file measured 2, this sweep measures 4");
  // A dimension the request does not know before the run is not compared.
  EXPECT_EQ(sweep_difference(records, {{"ranks", ranks, {}, {}}}), "");
}

TEST(EnvGrid, TomlFileWithStringsAndIntegers) {
  std::string path = ::testing::TempDir() + "grid.toml";
  {
    std::ofstream f(path);
    f << "[env]\nNCCL_ALGO = [\"Ring,Tree\", \"Ring\"]\nNCCL_BUFFSIZE = [4194304]\n";
  }
  auto axes = read_env_grid(path);
  ASSERT_EQ(axes.size(), 2u);
  EXPECT_EQ(axes[0].values[0], "Ring,Tree");
  EXPECT_EQ(axes[1].values[0], "4194304");
  {
    std::ofstream f(path);
    f << "[env]\nNCCL_ALGO = [1.5]\n";
  }
  EXPECT_THROW(read_env_grid(path), Error);
  {
    std::ofstream f(path);
    f << "[grid]\nNCCL_ALGO = [\"x\"]\n";
  }
  EXPECT_THROW(read_env_grid(path), Error);
  std::remove(path.c_str());
}

// A value with a control character would end its line in --emit-env's file (a command when
// sourced): refused naming the variable, the value never shown.
TEST(EnvGrid, ControlCharactersInValuesAreRefusedUnshown) {
  for (const std::string value : {"ok\ntouch pwn #", "a\rb", "\x1b[2J", "tab\there", "del\x7f"}) {
    try {
      parse_env_axis("NCCL_X=1," + value);
      ADD_FAILURE() << "accepted a value with a control character";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("--env NCCL_X"), std::string::npos) << what;
      EXPECT_NE(what.find("control character"), std::string::npos) << what;
      EXPECT_EQ(what.find(value), std::string::npos) << what;
    }
  }
  std::string path = ::testing::TempDir() + "grid_control.toml";
  {
    std::ofstream f(path);
    f << "[env]\nNCCL_ALGO = [\"Ring\\ntouch pwn\"]\n";
  }
  EXPECT_THROW(read_env_grid(path), Error);
  std::remove(path.c_str());
  EXPECT_EQ(parse_env_axis("NCCL_X=$(touch pwn);'`x`\"").values.size(), 1u);  // quoted when written
}

// The refusal names the option by its variable: a value (a secret's) is not repeated.
TEST(EnvGrid, RefusalsDoNotRepeatTheValues) {
  try {
    parse_env_axis("GLOO_AUTH_TOKEN=topsecret1,topsecret2");
    ADD_FAILURE() << "accepted a secret";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find("topsecret"), std::string::npos) << e.what();
  }
}

TEST(EnvGrid, MismatchesBetweenRanksAreNamed) {
  auto lines = environment_mismatches(
      {R"({"NCCL_A":"1","NCCL_B":"2"})", R"({"NCCL_A":"1","NCCL_B":"3"})", R"({"NCCL_A":"1"})"});
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "NCCL_B: rank 1 has NCCL_B=3, rank 0 NCCL_B=2");
  EXPECT_EQ(lines[1], "NCCL_B: rank 2 has unset, rank 0 NCCL_B=2");
  EXPECT_TRUE(environment_mismatches({R"({"NCCL_A":"1"})", R"({"NCCL_A":"1"})"}).empty());
}

}  // namespace
}  // namespace cb
