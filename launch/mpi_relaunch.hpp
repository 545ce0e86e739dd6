// `commbench run -B mpi` with no launcher runs itself under the MPI launcher this build was made
// with, as a child, so nobody has to type mpirun on one machine and commbench still reports.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/progress_display.hpp"

namespace cb {

struct MpiLaunchPlan {
  std::vector<std::string> argv;  // launcher, its flags, then this program's args
  std::vector<std::pair<std::string, std::string>> env;  // set unless the user already did
  std::vector<std::string> warnings;
};

// The command for `nranks` ranks of `program_args` (args[0] = this program) on a host with
// `cores` cores. Open MPI: --oversubscribe when nranks > cores, binding to cores otherwise, root
// permission and coll/tuned dynamic rules (for -A) through the environment. MPICH:
// collective fallback set to error so a forced algorithm is never silently replaced.
MpiLaunchPlan plan_mpi_launch(const std::string& flavor, const std::string& launcher, int nranks,
                              int cores, bool as_root,
                              const std::vector<std::string>& program_args);

// A whole run of commbench ranks under the build's MPI launcher, started as a child.
struct MpiJob {
  int nranks = 2;
  std::vector<std::string> args;  // the ranks' command line, args[0] the program's path
  std::vector<std::pair<std::string, std::string>> env;  // set in every rank's environment
  // How the progress rank 0 reports is shown (progress_relay.hpp); the ranks' lines that the
  // launcher passes on appear above a bar.
  ProgressDisplay::Style progress = ProgressDisplay::Style::Off;
};

// Runs `job` under the MPI launcher as a child of this process and returns the run's exit code:
// 0, a rank's 2-5, or 1. On failure it has printed one line naming the first cause (a rank killed
// by a signal, a rank's own error; rank_status.hpp); the launcher's own messages are shown only
// when no rank got far enough to say anything. Throws a runtime Error when the launcher cannot
// be started or the run is interrupted (SIGINT, SIGTERM, SIGHUP are passed to the launcher).
int run_mpi_job(const MpiJob& job);

// `commbench run` with no launcher and an MPI backend: this very command as an MpiJob.
int relaunch_under_mpi(int nranks, ProgressDisplay::Style progress);

// The MPI launcher and flavor this build was configured with.
std::string build_mpi_launcher();
std::string build_mpi_flavor();

// Set in the environment of a re-executed run so that a rank which does not find itself
// under MPI (e.g. a launcher of the other MPI) fails instead of re-executing again.
inline constexpr const char* kRelaunchedEnv = "COMMBENCH_RELAUNCHED";

}  // namespace cb
