// The local launcher's pure parts: exit-status verdicts, the MPI re-execution command, and
// reading the launch environment.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "core/process_start.hpp"
#include "launch/mpi_relaunch.hpp"
#include "launch/rank_exits.hpp"
#include "launch/rank_status.hpp"
#include "launch/start.hpp"
#include "launch/temp_dir.hpp"

namespace cb {
namespace {

RankExit exited(int rank, int code, std::string message = "") {
  RankExit e;
  e.rank = rank;
  e.code = code;
  e.message = std::move(message);
  return e;
}
RankExit killed(int rank, int sig, bool by_launcher = false) {
  RankExit e;
  e.rank = rank;
  e.signaled = true;
  e.code = sig;
  e.stopped_by_launcher = by_launcher;
  return e;
}

TEST(RankExits, AllZeroIsSuccess) {
  RunVerdict v = judge({exited(0, 0), exited(1, 0)});
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_TRUE(v.message.empty());
}

TEST(RankExits, KilledRankIsNamedAndEndsWithOne) {
  // Peers of a crashed rank exit 1 with I/O errors; the crash is what gets reported.
  RunVerdict v = judge({exited(0, 1), killed(2, 9), exited(1, 1)});
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_EQ(v.message, "rank 2 was killed by signal 9 (Killed)");
}

TEST(RankExits, CommbenchCodesPassThroughWithoutMessage) {
  EXPECT_EQ(judge({exited(0, 3), exited(1, 3)}).exit_code, 3);
  EXPECT_EQ(judge({exited(0, 4), exited(1, 1)}).exit_code, 4);  // timeout beats its fallout
  EXPECT_EQ(judge({exited(0, 0), exited(1, 2)}).exit_code, 2);
  EXPECT_TRUE(judge({exited(0, 3)}).message.empty());
}

TEST(RankExits, RuntimeFailureNamesTheRank) {
  RunVerdict v = judge({exited(0, 0), exited(1, 1)});
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_EQ(v.message, "rank 1 exited with code 1");
}

TEST(RankExits, UnknownExitCodeBecomesOne) {
  RunVerdict v = judge({exited(0, 127), exited(1, 3)});
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_EQ(v.message, "rank 0 exited with code 127");
}

TEST(RankExits, RanksStoppedByTheLauncherAreNotTheCause) {
  RunVerdict v = judge({exited(1, 4), killed(0, 15, true)});
  EXPECT_EQ(v.exit_code, 4);
}

TEST(RankExits, TheFailingRanksOwnMessageIsTheLine) {
  // A usage error on one rank beats its peer's reaction, and keeps its own words and code.
  RunVerdict v = judge({exited(0, 1, "Gloo allreduce failed: Connection closed by peer"),
                        exited(1, 2, "invalid thing")});
  EXPECT_EQ(v.exit_code, 2);
  EXPECT_EQ(v.message, "invalid thing");
  // A killed rank left no message: it is named, whatever its peers said.
  v = judge({exited(0, 1, "Connection reset by peer"), killed(1, 9)});
  EXPECT_EQ(v.message, "rank 1 was killed by signal 9 (Killed)");
  // Of two runtime failures, the first to end is the cause.
  v = judge({exited(1, 1, "cannot write 'x.jsonl'"), exited(0, 1, "Connection closed")});
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_EQ(v.message, "cannot write 'x.jsonl'");
}

TEST(RankStatus, FilesGiveCodesMessagesAndTheOrderRanksFailed) {
  TempDir dir;
  auto write = [&](int rank, const std::string& text) {
    std::ofstream(dir.path() + "/status-" + std::to_string(rank)) << text;
  };
  // Rank 0 was stopped (SIGTERM) after rank 2 failed, though it wrote its file first.
  write(0, "signal 15 2000\n");
  write(2, "exit 1 1000\nConnection closed by peer");
  // Rank 1 left nothing: killed by what the launcher reported (SIGKILL), so it sorts first.
  std::vector<RankExit> e = read_rank_status(dir.path(), 3, 9, 1);
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].rank, 1);
  EXPECT_TRUE(e[0].signaled && e[0].code == 9 && !e[0].stopped_by_launcher);
  EXPECT_EQ(e[1].rank, 2);
  EXPECT_EQ(e[1].code, 1);
  EXPECT_EQ(e[1].message, "Connection closed by peer");
  EXPECT_EQ(e[2].rank, 0);
  EXPECT_TRUE(e[2].signaled && e[2].stopped_by_launcher);
  EXPECT_EQ(judge(e).message, "rank 1 was killed by signal 9 (Killed)");
  // Without a signal from the launcher, a rank without a file takes the launcher's exit code.
  e = read_rank_status(dir.path(), 4, 0, 7);
  EXPECT_EQ(e[0].rank, 1);
  EXPECT_FALSE(e[0].signaled);
  EXPECT_EQ(e[0].code, 7);
}

TEST(RankStatus, WatchedRanksAcrossHostsNameTheHostOfTheFirstSilentEnd) {
  TempDir dir;
  auto write = [&](int rank, const std::string& text) {
    std::ofstream(dir.path() + "/status-" + std::to_string(rank)) << text;
  };
  write(0, "signal 15 3000\n");
  write(2, "exit 1 2500\nConnection reset by peer");
  // Rank 1 connected and left no file: it ended without a word, first (at 2000).
  std::map<int, std::string> hosts = {{0, "h1"}, {1, "h2"}, {2, "h3"}};
  std::vector<RankExit> e =
      read_watched_ranks(dir.path(), hosts, {{0, 3100}, {1, 2000}, {2, 2600}});
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].rank, 1);
  EXPECT_TRUE(e[0].unreported);
  EXPECT_EQ(judge(e).exit_code, 1);
  EXPECT_EQ(judge(e).message,
            "rank 1 on host h2 ended without a word: killed by a signal it could not catch, or "
            "its host went down");
  // On one host, no host is named.
  e = read_watched_ranks(dir.path(), {{0, "h1"}, {1, "h1"}}, {{1, 2000}});
  EXPECT_EQ(e[0].host, "");
  EXPECT_EQ(describe(e[0]).rfind("rank 1 ended without a word", 0), 0u);
  // Ranks that never connected are not blamed.
  e = read_watched_ranks(dir.path(), {{0, "h1"}, {2, "h3"}}, {});
  EXPECT_EQ(judge(e).message, "Connection reset by peer");
}

TEST(RankStatus, RanksKilledWithinAMillisecondAreNotOrdered) {
  TempDir dir;
  // Neither left a file; the parent saw rank 0 end 0.2 ms before rank 1.
  std::vector<RankExit> e = read_rank_status(dir.path(), 2, 9, 1, {{0, 5'000'000}, {1, 5'200'000}});
  EXPECT_EQ(judge(e).message,
            "rank 0 or rank 1 was killed by signal 9 (Killed) first: both ended within 1 ms, too "
            "close to tell which");
  // 3 ms apart, the first is named.
  e = read_rank_status(dir.path(), 2, 9, 1, {{0, 8'000'000}, {1, 5'000'000}});
  EXPECT_EQ(judge(e).message, "rank 1 was killed by signal 9 (Killed)");
}

TEST(RankExits, AKilledRankOnAnotherHostIsNamedWithItsHost) {
  RankExit e = killed(3, 9);
  e.host = "node07";
  EXPECT_EQ(describe(e), "rank 3 on host node07 was killed by signal 9 (Killed)");
}

TEST(RankStatus, ARankKeepsItsFirstRecord) {
  TempDir dir;
  // Read once per process, at the first call: this test is the only one here that makes it.
  ::setenv(kRankStatusEnv, dir.path().c_str(), 1);
  ASSERT_TRUE(rank_status_wanted());
  ::unsetenv(kRankStatusEnv);
  record_rank_exit(1, "cannot write 'x.jsonl': No space left on device");
  record_rank_exit(1, "Gloo barrier failed: Connection closed by peer");  // unwinding's echo
  std::vector<RankExit> e = read_rank_status(dir.path(), 1, 0, 0);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].code, 1);
  EXPECT_EQ(e[0].message, "cannot write 'x.jsonl': No space left on device");
}

TEST(MpiRelaunch, OpenMpiOversubscribesOnlyWhenNeeded) {
  auto p = plan_mpi_launch("Open MPI", "/usr/bin/mpirun.openmpi", 4, 2, true,
                           {"/bin/commbench", "run", "-N", "4"});
  std::vector<std::string> want = {"/usr/bin/mpirun.openmpi",
                                   "-np",
                                   "4",
                                   "--oversubscribe",
                                   "--bind-to",
                                   "none",
                                   "/bin/commbench",
                                   "run",
                                   "-N",
                                   "4"};
  EXPECT_EQ(p.argv, want);
  auto has_env = [&](const std::string& k) {
    for (const auto& [key, value] : p.env) {
      if (key == k && value == "1") return true;
    }
    return false;
  };
  EXPECT_TRUE(has_env("OMPI_ALLOW_RUN_AS_ROOT"));
  EXPECT_TRUE(has_env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"));
  EXPECT_TRUE(has_env("OMPI_MCA_coll_tuned_use_dynamic_rules"));

  auto q = plan_mpi_launch("Open MPI", "mpirun", 2, 2, false, {"cb"});
  std::vector<std::string> bound = {"mpirun", "-np", "2", "--bind-to", "core", "cb"};
  EXPECT_EQ(q.argv, bound);
  for (const auto& [key, value] : q.env) EXPECT_NE(key, "OMPI_ALLOW_RUN_AS_ROOT");
}

TEST(MpiRelaunch, MpichForcesErrorFallbackAndWarnsWhenOversubscribed) {
  auto p = plan_mpi_launch("MPICH", "mpiexec.mpich", 2, 2, true, {"cb", "run"});
  std::vector<std::string> want = {"mpiexec.mpich", "-n", "2", "cb", "run"};
  EXPECT_EQ(p.argv, want);
  ASSERT_EQ(p.env.size(), 1u);
  EXPECT_EQ(p.env[0].first, "MPIR_CVAR_COLLECTIVE_FALLBACK");
  EXPECT_EQ(p.env[0].second, "error");
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(plan_mpi_launch("MPICH", "mpiexec.mpich", 4, 2, false, {"cb"}).warnings.size(), 1u);
}

// Sets environment variables for one test and puts them back.
class ScopedEnv {
 public:
  void set(const char* name, const char* value) {
    const char* old = std::getenv(name);
    saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    if (value) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) {
        ::setenv(it->first.c_str(), it->second->c_str(), 1);
      } else {
        ::unsetenv(it->first.c_str());
      }
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST(DetectLaunch, LocalLauncherVariablesWin) {
  ScopedEnv env;
  env.set(kLocalStoreEnv, "/tmp/commbench-abc");
  env.set(kLocalRankEnv, "2");
  env.set(kLocalSizeEnv, "4");
  LaunchInfo li = detect_launch();
  EXPECT_EQ(li.kind, LaunchInfo::Kind::Local);
  EXPECT_EQ(li.rank, 2);
  EXPECT_EQ(li.size, 4);
  EXPECT_EQ(li.store_dir, "/tmp/commbench-abc");
}

TEST(DetectLaunch, OpenMpiVariables) {
  ScopedEnv env;
  env.set(kLocalStoreEnv, nullptr);
  env.set("OMPI_COMM_WORLD_RANK", "1");
  env.set("OMPI_COMM_WORLD_SIZE", "3");
  LaunchInfo li = detect_launch();
  EXPECT_EQ(li.kind, LaunchInfo::Kind::Mpi);
  EXPECT_EQ(li.rank, 1);
  EXPECT_EQ(li.size, 3);
}

TEST(DetectLaunch, SrunWithPmixTakesTheSizeFromTheStep) {
  ScopedEnv env;
  env.set(kLocalStoreEnv, nullptr);
  for (const char* v :
       {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE", "PMIX_SIZE",
        "MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PMI_LOCAL_RANK"})
    env.set(v, nullptr);
  env.set("PMIX_RANK", "2");
  env.set("SLURM_STEP_ID", "0");
  env.set("SLURM_STEP_NUM_TASKS", "3");
  env.set("SLURM_LOCALID", "1");
  env.set("SLURM_NNODES", "2");
  env.set("SLURM_JOB_ID", "42");
  LaunchInfo li = detect_launch();
  EXPECT_EQ(li.kind, LaunchInfo::Kind::Mpi);
  EXPECT_EQ(li.rank, 2);
  EXPECT_EQ(li.size, 3);
  EXPECT_EQ(li.local_rank, 1);
  auto facts = launcher_facts(li);
  EXPECT_EQ(facts.at("kind"), "slurm");
  EXPECT_EQ(facts.at("SLURM_NNODES"), "2");
  EXPECT_EQ(facts.at("SLURM_JOB_ID"), "42");
  env.set("SLURM_STEP_ID", nullptr);
  EXPECT_EQ(launcher_facts(detect_launch()).at("kind"), "mpi");
  EXPECT_EQ(launcher_facts(detect_launch()).count("SLURM_JOB_ID"), 0u);
}

TEST(DefaultRanks, CudaVisibleDevicesCounts) {
  ScopedEnv env;
  env.set("CUDA_VISIBLE_DEVICES", "0,1,3");
  EXPECT_EQ(visible_gpu_count(), 3);
  EXPECT_EQ(default_local_ranks(), 3);
  env.set("CUDA_VISIBLE_DEVICES", "");
  EXPECT_EQ(visible_gpu_count(), 0);
  EXPECT_EQ(default_local_ranks(), 2);
  env.set("CUDA_VISIBLE_DEVICES", "1,-1,2");  // entries after an invalid one are ignored
  EXPECT_EQ(visible_gpu_count(), 1);
}

}  // namespace
}  // namespace cb
