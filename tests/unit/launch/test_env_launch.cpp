// The env:// variables (torchrun, Kubernetes): what starts an env:// launch, and every check of
// the variables, on environments given by hand.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/env_launch.hpp"
#include "launch/env_wire.hpp"

namespace cb {
namespace {

struct FakeEnv {
  std::map<std::string, std::string> vars;
  EnvLookup lookup() const {
    return [this](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

FakeEnv torchrun_rank(const std::string& rank, const std::string& world) {
  return {{{"MASTER_ADDR", "node0"},
           {"MASTER_PORT", "29500"},
           {"RANK", rank},
           {"WORLD_SIZE", world},
           {"LOCAL_RANK", "1"},
           {"LOCAL_WORLD_SIZE", "2"},
           {"GROUP_RANK", "1"},
           {"TORCHELASTIC_RUN_ID", "job7"}}};
}

std::string problem_of(const FakeEnv& env) {
  EnvLaunch out;
  return read_env_launch(env.lookup(), out);
}

TEST(EnvLaunch, RankOrWorldSizeStartsIt) {
  EXPECT_FALSE(env_launch_requested(FakeEnv{}.lookup()));
  EXPECT_FALSE(env_launch_requested(FakeEnv{{{"MASTER_ADDR", "x"}, {"MASTER_PORT", "1"}}}.lookup()));
  EXPECT_TRUE(env_launch_requested(FakeEnv{{{"RANK", "0"}}}.lookup()));
  EXPECT_TRUE(env_launch_requested(FakeEnv{{{"WORLD_SIZE", "2"}}}.lookup()));
  EXPECT_FALSE(env_launch_requested(FakeEnv{{{"RANK", ""}}}.lookup()));
}

TEST(EnvLaunch, ReadsTorchrunsVariables) {
  EnvLaunch out;
  EXPECT_EQ(read_env_launch(torchrun_rank("3", "6").lookup(), out), "");
  EXPECT_EQ(out.master_addr, "node0");
  EXPECT_EQ(out.master_port, 29500);
  EXPECT_EQ(out.rank, 3);
  EXPECT_EQ(out.world_size, 6);
  EXPECT_EQ(out.local_rank, 1);
  EXPECT_EQ(out.local_world_size, 2);
}

TEST(EnvLaunch, NamesEveryMissingVariable) {
  std::string p = problem_of(FakeEnv{{{"RANK", "1"}, {"MASTER_PORT", "29500"}}});
  EXPECT_NE(p.find("without MASTER_ADDR, WORLD_SIZE:"), std::string::npos) << p;
}

TEST(EnvLaunch, RankMustBeBelowWorldSize) {
  EXPECT_EQ(problem_of(torchrun_rank("5", "6")), "");
  std::string p = problem_of(torchrun_rank("6", "6"));
  EXPECT_NE(p.find("RANK 6 is not below WORLD_SIZE 6"), std::string::npos) << p;
  EXPECT_NE(problem_of(torchrun_rank("-1", "6")).find("RANK='-1'"), std::string::npos);
  EXPECT_NE(problem_of(torchrun_rank("0", "0")).find("WORLD_SIZE='0'"), std::string::npos);
}

TEST(EnvLaunch, IntegersAndPortsAreChecked) {
  EXPECT_NE(problem_of(torchrun_rank("1x", "6")).find("RANK='1x' is not an integer"),
            std::string::npos);
  FakeEnv env = torchrun_rank("1", "6");
  env.vars["MASTER_PORT"] = "65536";
  EXPECT_NE(problem_of(env).find("MASTER_PORT='65536'"), std::string::npos);
  env.vars["MASTER_PORT"] = "0";
  EXPECT_NE(problem_of(env).find("from 1 to 65535"), std::string::npos);
}

TEST(EnvLaunch, LocalRanksAreChecked) {
  FakeEnv env = torchrun_rank("1", "6");
  env.vars["LOCAL_RANK"] = "2";
  EXPECT_NE(problem_of(env).find("LOCAL_RANK 2 is not below LOCAL_WORLD_SIZE 2"),
            std::string::npos);
  env.vars["LOCAL_RANK"] = "0";
  env.vars["LOCAL_WORLD_SIZE"] = "8";
  EXPECT_NE(problem_of(env).find("LOCAL_WORLD_SIZE 8 is larger than WORLD_SIZE 6"),
            std::string::npos);
  env.vars.erase("LOCAL_WORLD_SIZE");
  env.vars.erase("LOCAL_RANK");
  EXPECT_EQ(problem_of(env), "");
}

TEST(EnvLaunch, UnderTorchrunsAgentStoreRankZeroServesOnTheNextPort) {
  FakeEnv env = torchrun_rank("1", "6");
  EnvLaunch out;
  env.vars["TORCHELASTIC_USE_AGENT_STORE"] = "False";
  EXPECT_EQ(read_env_launch(env.lookup(), out), "");
  EXPECT_EQ(out.master_port, 29500);
  env.vars["TORCHELASTIC_USE_AGENT_STORE"] = "True";
  EXPECT_EQ(read_env_launch(env.lookup(), out), "");
  EXPECT_EQ(out.master_port, 29501);
  env.vars["MASTER_PORT"] = "65535";
  EXPECT_NE(problem_of(env).find("below 65535"), std::string::npos) << problem_of(env);
}

TEST(EnvLaunch, AProcessWithBadVariablesStillKnowsWhereRankZeroServes) {
  // So that it can tell rank 0 why it cannot start: RANK missing, not an integer, too large.
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"RANK", ""}, {"RANK", "two"}, {"WORLD_SIZE", ""}, {"LOCAL_RANK", "9"}}) {
    FakeEnv env = torchrun_rank("1", "6");
    if (value.empty()) {
      env.vars.erase(name);
    } else {
      env.vars[name] = value;
    }
    env.vars["TORCHELASTIC_USE_AGENT_STORE"] = "True";
    EnvLaunch out;
    EXPECT_NE(read_env_launch(env.lookup(), out), "") << name;
    EXPECT_EQ(out.master_addr, "node0") << name;
    EXPECT_EQ(out.master_port, 29501) << name << ": the port rank 0 serves on";
  }
  // Without a port it can use, it cannot tell anyone.
  for (const std::string port : {"", "http", "0"}) {
    FakeEnv env = torchrun_rank("1", "6");
    env.vars.erase("RANK");
    if (port.empty()) {
      env.vars.erase("MASTER_PORT");
    } else {
      env.vars["MASTER_PORT"] = port;
    }
    EnvLaunch out;
    EXPECT_NE(read_env_launch(env.lookup(), out), "");
    EXPECT_EQ(out.master_port, 0) << port;
  }
}

TEST(EnvLaunch, MetaGetsTheConventionsVariablesOnly) {
  FakeEnv env = torchrun_rank("3", "6");
  env.vars["HOME"] = "/root";
  env.vars["TORCHELASTIC_AUTH_TOKEN"] = "s3cret";
  auto vars = env_launch_variables(env.lookup());
  EXPECT_EQ(vars.at("MASTER_ADDR"), "node0");
  EXPECT_EQ(vars.at("WORLD_SIZE"), "6");
  EXPECT_EQ(vars.at("GROUP_RANK"), "1");
  EXPECT_EQ(vars.at("TORCHELASTIC_RUN_ID"), "job7");
  EXPECT_EQ(vars.count("HOME"), 0u);
  for (const auto& [name, value] : vars) EXPECT_NE(value, "s3cret") << name;
}

TEST(EnvWire, PackedStringsRoundTripWithAnyBytes) {
  std::vector<std::string> parts = {"", std::string("a\0b", 3), std::string(300, '\xff')};
  auto back = env_wire::unpack(env_wire::pack(parts));
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, parts);
  EXPECT_FALSE(env_wire::unpack(std::string("\0\0\0\x09" "abc", 7)));
  EXPECT_EQ(env_wire::split_lines(env_wire::join_lines({"h1", "", "h3"})),
            (std::vector<std::string>{"h1", "", "h3"}));
}

}  // namespace
}  // namespace cb
