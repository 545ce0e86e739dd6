// The env:// rendezvous with real TCP on 127.0.0.1: ranks are threads (a forked process where a
// rank must end without a word). The ranks meet, disagree, miss each other, find the port taken
// or MASTER_ADDR unresolvable, each with its line; the Gloo control channel built over the
// rendezvous carries NCCL's unique id (128 bytes with NULs) from rank 0 to every rank.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <future>
#include <thread>

#include "collectives/backends/gloo/gloo_control.hpp"
#include "common/error.hpp"
#include "launch/env_rendezvous.hpp"
#include "launch/peer_loss.hpp"

namespace cb {
namespace {

using Clock = std::chrono::steady_clock;

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin);
  socklen_t len = sizeof sin;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&sin), &len);
  ::close(fd);
  return ntohs(sin.sin_port);
}

LaunchInfo env_rank(int rank, int size, int port, const std::string& addr = "127.0.0.1") {
  LaunchInfo li;
  li.kind = LaunchInfo::Kind::Env;
  li.rank = rank;
  li.size = size;
  li.master_addr = addr;
  li.master_port = port;
  return li;
}

// What each rank's `body` returned, or the error it threw ("exit N: line"); each rank runs
// plans[rank] where given.
std::vector<std::string> run_ranks(const std::vector<LaunchInfo>& ranks, double timeout,
                                   const std::function<std::string(EnvRendezvous&)>& body,
                                   const std::vector<PlanFingerprint>& plans = {}) {
  std::vector<std::future<std::string>> futures;
  for (const auto& li : ranks) {
    PlanFingerprint plan = plans.empty() ? PlanFingerprint{} : plans[li.rank];
    futures.push_back(std::async(std::launch::async, [&, li, plan] {
      try {
        EnvRendezvous r(li, timeout, plan);
        return body(r);
      } catch (const Error& e) {
        return "exit " + std::to_string(exit_code(e.kind())) + ": " + e.what();
      }
    }));
  }
  std::vector<std::string> out;
  for (auto& f : futures) out.push_back(f.get());
  return out;
}

TEST(EnvRendezvous, RanksMeetAndAllgatherThroughRankZero) {
  const int port = free_port();
  auto out = run_ranks({env_rank(0, 3, port), env_rank(1, 3, port), env_rank(2, 3, port)}, 20,
                       [](EnvRendezvous& r) {
                         std::string joined;
                         for (const auto& s : r.allgather("r" + std::to_string(r.rank())))
                           joined += s + ",";
                         std::uint64_t v = 1;
                         r.sum(&v, 1);
                         return joined + std::to_string(v) + " " + r.address() + " " +
                                std::to_string(r.hosts().size());
                       });
  for (const auto& o : out) EXPECT_EQ(o, "r0,r1,r2,3 127.0.0.1 3");
}

TEST(EnvRendezvous, TheGlooControlChannelCarriesNcclsUniqueId) {
  const int port = free_port();
  std::string id(128, '\0');
  for (std::size_t i = 0; i < id.size(); i += 3) id[i] = static_cast<char>(i);
  auto out = run_ranks({env_rank(0, 3, port), env_rank(1, 3, port), env_rank(2, 3, port)}, 20,
                       [&](EnvRendezvous& r) {
                         auto mesh = gloo_backend::make_rendezvous_control(r, r.address(), 20);
                         r.watch();
                         // As nccl_comm.cpp exchanges it: rank 0's id, everyone else empty.
                         auto all = mesh->allgather(mesh->rank() == 0 ? id : std::string());
                         // A pair of ranks talks directly, as probe links needs.
                         int token = 7 + mesh->rank();
                         if (mesh->rank() == 1) mesh->send(2, &token, sizeof token);
                         if (mesh->rank() == 2) mesh->recv(1, &token, sizeof token);
                         mesh->barrier();
                         return std::string(all.front() == id ? "id" : "wrong id") + " " +
                                std::to_string(token);
                       });
  EXPECT_EQ(out, (std::vector<std::string>{"id 7", "id 8", "id 8"}));
}

TEST(EnvRendezvous, AWorldSizeThatDiffersEndsEveryRankWithOneLine) {
  const int port = free_port();
  const auto start = Clock::now();
  auto out = run_ranks({env_rank(0, 3, port), env_rank(1, 3, port), env_rank(2, 4, port)}, 30,
                       [](EnvRendezvous&) { return std::string("met"); });
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(15));
  for (const auto& o : out) {
    EXPECT_EQ(o.rfind("exit 2: env:// rendezvous: WORLD_SIZE differs between ranks: 4 on host ", 0),
              0u)
        << o;
  }
}

TEST(EnvRendezvous, TwoProcessesWithOneRankAreRefused) {
  const int port = free_port();
  auto out = run_ranks({env_rank(0, 3, port), env_rank(1, 3, port), env_rank(1, 3, port)}, 30,
                       [](EnvRendezvous&) { return std::string("met"); });
  EXPECT_NE(out[0].find("exit 2: env:// rendezvous: two processes have RANK=1"), std::string::npos)
      << out[0];
}

TEST(EnvRendezvous, RanksThatNeverComeAreNamedWithinTheTimeout) {
  const int port = free_port();
  const auto start = Clock::now();
  auto out = run_ranks({env_rank(0, 4, port), env_rank(2, 4, port)}, 3,
                       [](EnvRendezvous&) { return std::string("met"); });
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(3));
  for (const auto& o : out) {
    EXPECT_NE(o.find("exit 1: env:// rendezvous: 2 of WORLD_SIZE 4 ranks joined rank 0 on port"),
              std::string::npos)
        << o;
    EXPECT_NE(o.find("never came: ranks 1, 3"), std::string::npos) << o;
  }
}

TEST(EnvRendezvous, APortInUseIsNamed) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_ANY);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t len = sizeof sin;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&sin), &len);
  const int port = ntohs(sin.sin_port);
  auto out = run_ranks({env_rank(0, 2, port)}, 5, [](EnvRendezvous&) { return std::string(); });
  ::close(fd);
  EXPECT_EQ(out[0].rfind(fmt::format("exit 1: env:// rendezvous: rank 0 cannot listen on "
                                     "MASTER_PORT {}: Address already in use",
                                     port),
                         0),
            0u)
      << out[0];
}

TEST(EnvRendezvous, AnUnresolvableMasterAddrIsAUsageErrorWithinTheTimeout) {
  const auto start = Clock::now();
  auto out = run_ranks({env_rank(1, 2, free_port(), "no-such-host.invalid")}, 2,
                       [](EnvRendezvous&) { return std::string(); });
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(out[0].rfind("exit 2: env:// rendezvous: MASTER_ADDR 'no-such-host.invalid' does not "
                         "resolve",
                         0),
            0u)
      << out[0];
}

TEST(EnvRendezvous, AProcessWithWrongVariablesTellsRankZero) {
  const int port = free_port();
  LaunchInfo bad = env_rank(0, 1, port);
  bad.env_problem = "env:// launch: RANK 4 is not below WORLD_SIZE 4 (ranks are 0 to 3)";
  ::setenv("RANK", "4", 1);
  std::thread complainer([&] { tell_rendezvous_of_problem(bad, 20); });
  auto out = run_ranks({env_rank(0, 6, port)}, 20, [](EnvRendezvous&) { return std::string(); });
  complainer.join();
  ::unsetenv("RANK");
  EXPECT_NE(out[0].find("exit 2: env:// launch: the process with RANK=4 on host "),
            std::string::npos)
      << out[0];
  EXPECT_NE(out[0].find(": RANK 4 is not below WORLD_SIZE 4"), std::string::npos) << out[0];
}

PlanFingerprint plan_of(const std::string& collectives) {
  PlanFingerprint f;
  f.add("subcommand", "run");
  f.add("--collectives", collectives);
  f.add("--max-bytes", "1 KiB");
  return f;
}

TEST(EnvRendezvous, RanksWithOnePlanMeet) {
  const int port = free_port();
  auto out = run_ranks({env_rank(0, 2, port), env_rank(1, 2, port)}, 20,
                       [](EnvRendezvous&) { return std::string("met"); },
                       {plan_of("allreduce"), plan_of("allreduce")});
  EXPECT_EQ(out, (std::vector<std::string>{"met", "met"}));
}

TEST(EnvRendezvous, ARankThatRunsAnotherPlanEndsEveryRankNamingTheOption) {
  const int port = free_port();
  const auto start = Clock::now();
  auto out = run_ranks({env_rank(0, 3, port), env_rank(1, 3, port), env_rank(2, 3, port)}, 30,
                       [](EnvRendezvous&) { return std::string("met"); },
                       {plan_of("allreduce"), plan_of("allreduce"), plan_of("broadcast")});
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(10));
  for (const auto& o : out) {
    EXPECT_EQ(o.rfind("exit 2: env:// rendezvous: rank 2 on host ", 0), 0u) << o;
    EXPECT_NE(o.find(" runs another plan than rank 0: --collectives broadcast there, allreduce "
                     "on rank 0; every process must be given the same options"),
              std::string::npos)
        << o;
  }
}

TEST(EnvRendezvous, AProcessWithoutRankTellsRankZero) {
  const int port = free_port();
  LaunchInfo bad = env_rank(0, 1, port);
  bad.env_problem =
      "env:// launch: without RANK: MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE are all needed";
  ::unsetenv("RANK");
  const auto start = Clock::now();
  std::thread complainer([&] { tell_rendezvous_of_problem(bad, 20); });
  auto out = run_ranks({env_rank(0, 2, port)}, 20, [](EnvRendezvous&) { return std::string(); });
  complainer.join();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(out[0].rfind("exit 2: env:// launch: a process without RANK on host ", 0), 0u)
      << out[0];
  EXPECT_NE(out[0].find(": without RANK: MASTER_ADDR"), std::string::npos) << out[0];
}

// Last: it claims this process's failure report (peer_loss.hpp), as a failing main thread does.
TEST(EnvRendezvous, APeerThatEndsWithoutGoodbyeIsNamed) {
  const int port = free_port();
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    try {
      EnvRendezvous r(env_rank(1, 2, port), 20);
      ::_exit(0);  // no goodbye, as a killed rank
    } catch (...) {
      ::_exit(3);
    }
  }
  EnvRendezvous r(env_rank(0, 2, port), 20);
  EXPECT_EQ(failure_cause(std::chrono::milliseconds(0)), "");  // the report stays here
  r.watch();
  wait_for_peer_loss(std::chrono::seconds(10));
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(failure_cause(std::chrono::milliseconds(0)).rfind("rank 1 ended without a word", 0), 0u);
}

}  // namespace
}  // namespace cb
