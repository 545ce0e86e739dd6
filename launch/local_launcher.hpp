// The local launcher: `commbench run -N 4` with no mpirun starts 4 ranks itself.
//
// Each rank is this program (/proc/self/exe) with the same arguments, plus its rank, the size
// and a private rendezvous directory in the environment (see launch.hpp). The launcher waits
// for all of them, stops the rest when one fails, removes the directory, and returns the run's
// exit code. Ranks die with the launcher (PR_SET_PDEATHSIG), so none is left behind.
#pragma once

#include <string>
#include <vector>

#include "common/progress_display.hpp"

namespace cb {

struct LocalLaunchOptions {
  int nranks = 2;
  std::vector<std::string> args;  // argv of this process, args[0] included
  // After the first rank fails, how long the others get to finish on their own (rank 0 may be
  // writing output) before they are sent SIGTERM, then SIGKILL one second later.
  double grace_seconds = 3.0;
  // How the launcher shows the progress rank 0 reports (progress_relay.hpp); with a bar, the
  // ranks' stderr passes through the launcher so that their lines appear above it.
  ProgressDisplay::Style progress = ProgressDisplay::Style::Off;
};

// Returns the run's exit code: 0, a rank's 2-5 as it is, or 1 when one dies or exits with
// another code; on failure it prints the line naming the first cause (rank_status.hpp). Throws a
// runtime Error when interrupted.
int run_local_ranks(const LocalLaunchOptions& options);

// This process's own command line (from /proc/self/cmdline).
std::vector<std::string> own_command_line();

}  // namespace cb
