// What a failed launch says first: the launcher's or MPI library's own message (help boxes,
// MPICH aborts), hydra's banner kept off stdout, a launcher's exit code never taken for a rank's
// verdict, a stopped rank named in a timeout, and a launcher of another MPI refused.
#include <gtest/gtest.h>

#include "collectives/backends/mpi/flavor_check.hpp"
#include "launch/launcher_message.hpp"
#include "launch/rank_exits.hpp"

namespace cb {
namespace {

using Lines = std::vector<std::string>;
const std::string kRule(74, '-');

TEST(LauncherMessage, HelpBoxGivesItsFirstSentenceAndFacts) {
  Lines box = {kRule,
               "A requested component was not found, or was unable to be opened.  This",
               "means that this component is either not installed or is unable to be",
               "",
               "Host:      vm",
               "Framework: btl",
               "Component: nonexistent",
               kRule,
               kRule,
               "It looks like MPI_INIT failed for some reason; your parallel process is"};
  EXPECT_EQ(first_meaningful_message(box),
            "A requested component was not found, or was unable to be opened (Host: vm, "
            "Framework: btl, Component: nonexistent)");
}

TEST(LauncherMessage, ABoxSayingWhyComesBeforeOneSayingOnlyThatStartUpFailed) {
  // The ranks' boxes reach mpirun in any order: the generic one may come first.
  Lines boxes = {kRule,
                 "It looks like MPI_INIT failed for some reason; your parallel process is",
                 "likely to abort.",
                 kRule,
                 "*** An error occurred in MPI_Init_thread",
                 "*** on a NULL communicator",
                 kRule,
                 "A requested component was not found, or was unable to be opened.  This",
                 "",
                 "Framework: btl",
                 kRule};
  EXPECT_EQ(first_meaningful_message(boxes),
            "A requested component was not found, or was unable to be opened (Framework: btl)");
  // Alone, the generic box is still what was said.
  EXPECT_EQ(first_meaningful_message({kRule,
                                      "It looks like MPI_INIT failed for some reason; your "
                                      "parallel process is likely to abort.",
                                      kRule}),
            "It looks like MPI_INIT failed for some reason; your parallel process is likely to "
            "abort");
}

TEST(LauncherMessage, AHelpBoxOpenMpiLostIsSaidToBeLost) {
  Lines lost = {
      "[vm:23316] [[14314,0],0] ORTE_ERROR_LOG: Data unpack would read past end of "
      "buffer in file ../../../orte/util/show_help.c at line 501"};
  const std::string said =
      "it lost the ranks' own error message (ORTE_ERROR_LOG in show_help.c, a known Open MPI 4.1 "
      "race when a rank ends at once): rerun to read it";
  EXPECT_EQ(first_meaningful_message(lost), said);
  // A generic box that did arrive says less than that.
  lost.insert(lost.begin(), {kRule, "It looks like MPI_INIT failed for some reason.", kRule});
  EXPECT_EQ(first_meaningful_message(lost), said);
}

TEST(LauncherMessage, HelpBoxParagraphEndingInAColon) {
  Lines box = {kRule,
               "There are not enough slots available in the system to satisfy the 8",
               "slots that were requested by the application:",
               "",
               "  true",
               "",
               kRule};
  EXPECT_EQ(first_meaningful_message(box),
            "There are not enough slots available in the system to satisfy the 8 slots that were "
            "requested by the application");
}

TEST(LauncherMessage, NeverARuleOrABlankOrABanner) {
  EXPECT_EQ(first_meaningful_message({kRule, "", kRule}), "");
  EXPECT_EQ(first_meaningful_message({}), "");
  Lines banner = {"",
                  std::string(83, '='),
                  "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES",
                  "=   PID 1 RUNNING AT vm",
                  std::string(83, '='),
                  "YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)"};
  EXPECT_EQ(first_meaningful_message(banner), "");
  Lines aggregate = {
      "[vm:1] 1 more process has sent help message help-mca-base.txt / x",
      "[[25917,0],0] ORTE_ERROR_LOG: Out of resource in file show_help.c at line 507",
      kRule,
      "Primary job  terminated normally, but 1 process returned",
      "a non-zero exit code. Per user-direction, the job has been aborted.",
      kRule,
      "ssh: Could not resolve hostname nosuchhost: Name or service not known"};
  EXPECT_EQ(first_meaningful_message(aggregate),
            "ssh: Could not resolve hostname nosuchhost: Name or service not known");
}

TEST(LauncherMessage, MpichAbortWithoutItsPrefix) {
  Lines abort = {
      "Abort(940691215): Fatal error in internal_Init_thread: Other MPI error, Invalid "
      "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM value (bogus)"};
  EXPECT_EQ(first_meaningful_message(abort),
            "Fatal error in internal_Init_thread: Other MPI error, Invalid "
            "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM value (bogus)");
  EXPECT_LE(first_meaningful_message({std::string(1000, 'x')}).size(), 300u);
}

TEST(HydraBanner, DroppedFromADocumentWhateverTheChunks) {
  const std::string doc = "backend,bytes\r\nmpi,8\r\n";
  const std::string banner =
      "\n" + std::string(83, '=') + "\n=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n" +
      "=   PID 27600 RUNNING AT vm\n=   EXIT CODE: 9\n" + std::string(83, '=') +
      "\nYOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)\n"
      "This typically refers to a problem with your application.\n"
      "Please see the FAQ page for debugging suggestions\n";
  const std::string all = doc + banner + "mpi,16\n";
  for (std::size_t chunk : {1u, 7u, 4096u}) {
    HydraBannerFilter f;
    std::string out;
    for (std::size_t i = 0; i < all.size(); i += chunk) out += f.feed(all.substr(i, chunk));
    out += f.finish();
    EXPECT_EQ(out, doc + "mpi,16\n") << chunk;
  }
  HydraBannerFilter keep;  // blank lines and rules of a document stay
  const std::string table = "a\n\n" + std::string(30, '=') + "\nb\nend";
  std::string kept = keep.feed(table);
  kept += keep.finish();
  EXPECT_EQ(kept, table);
}

TEST(LauncherVerdict, ALaunchersExitCodeIsNeverARanksVerdict) {
  for (int code : {2, 3, 4, 5}) {
    EXPECT_EQ(launcher_job_exit_code(code, false), 1) << code;
    EXPECT_EQ(launcher_job_exit_code(code, true), code) << code;
  }
  EXPECT_EQ(launcher_job_exit_code(0, false), 0);
  EXPECT_EQ(launcher_job_exit_code(1, true), 1);
  EXPECT_EQ(launcher_job_exit_code(137, true), 1);
}

TEST(LauncherVerdict, TheLaunchersWordsGoFirstWhenNoRankExplained) {
  RankExit e;
  e.rank = 1;
  e.code = 1;
  RunVerdict v = with_launcher_words(judge({e}), "/usr/bin/mpiexec.mpich", "Invalid value (bogus)");
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_EQ(v.message, "mpiexec.mpich reported: Invalid value (bogus); rank 1 exited with code 1");
  RankExit killed = e;  // a rank killed outright is the cause: the launcher's words are not
  killed.signaled = true;
  killed.code = 9;
  EXPECT_EQ(with_launcher_words(judge({killed}), "mpirun", "Primary job terminated").message,
            "rank 1 was killed by signal 9 (Killed)");
  killed.guessed = true;  // only the launcher's exit status said so: its words go first
  EXPECT_EQ(with_launcher_words(judge({killed}), "mpiexec", "Fatal error").message,
            "mpiexec reported: Fatal error; rank 1 was killed by signal 9 (Killed)");
  e.message = "cannot open x";  // a rank's own words stay
  EXPECT_EQ(with_launcher_words(judge({e}), "mpirun", "noise").message, "cannot open x");
}

TEST(StoppedRank, TheTimeoutNamesTheStoppedRankNotTheOneThatWaited) {
  RankExit waited;
  waited.rank = 1;
  waited.code = 4;
  waited.message =
      "timeout: allreduce 64 B float sum made no progress for 5 s (--timeout) on rank 1, host h1; "
      "aborting";
  RankExit stopped;
  stopped.rank = 0;
  stopped.signaled = true;
  stopped.code = 9;
  stopped.stopped_by_launcher = true;
  std::vector<RankExit> exits = {waited, stopped};
  RunVerdict v = name_stopped_rank(judge(exits), exits, {{0, 6.04}}, {{0, "h0"}, {1, "h1"}});
  EXPECT_EQ(v.exit_code, 4);
  EXPECT_EQ(v.message,
            "timeout: allreduce 64 B float sum made no progress for 5 s (--timeout): rank 0 on "
            "host h0 was stopped (SIGSTOP or a debugger) for 6.0 s and made no progress");
  // Nothing stopped: the verdict as it was.
  EXPECT_EQ(name_stopped_rank(judge(exits), exits, {}, {}).message, waited.message);
  // No rank timed out yet still one was stopped (killed while stopped): a timeout all the same.
  RankExit silent = stopped;
  silent.stopped_by_launcher = false;
  RunVerdict w = name_stopped_rank(judge({silent}), {silent}, {{0, 3.0}}, {{0, "h0"}});
  EXPECT_EQ(w.message.rfind("rank 0 was stopped (SIGSTOP or a debugger) for 3.0 s", 0), 0u)
      << w.message;
}

TEST(FlavorCheck, ALauncherOfAnotherMpiIsNamedWithTheBuilds) {
  auto env = [](std::map<std::string, std::string> vars) {
    return [vars](const char* n) -> const char* {
      auto it = vars.find(n);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  };
  EXPECT_EQ(launcher_flavor_from_env(env({{"PMI_SIZE", "2"}, {"PMI_RANK", "0"}})),
            "MPICH's launcher");
  EXPECT_EQ(launcher_flavor_from_env(env({{"OMPI_COMM_WORLD_SIZE", "2"}, {"PMIX_RANK", "0"}})),
            "Open MPI's launcher");
  EXPECT_EQ(launcher_flavor_from_env(env({})), "");
  EXPECT_EQ(flavor_mismatch(2, 2, "Open MPI's launcher", "Open MPI 4.1.4"), "");
  EXPECT_EQ(flavor_mismatch(1, 1, "", "MPICH 4.0"), "");
  const std::string m = flavor_mismatch(1, 2, "MPICH's launcher", "Open MPI 4.1.4");
  EXPECT_NE(m.find("MPICH's launcher started 2 ranks"), std::string::npos) << m;
  EXPECT_NE(m.find("built with Open MPI 4.1.4"), std::string::npos) << m;
}

}  // namespace
}  // namespace cb
