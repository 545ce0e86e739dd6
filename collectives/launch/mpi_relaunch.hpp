// `commbench run -B mpi` with no launcher re-executes itself under the MPI launcher this build
// was made with, so nobody has to type mpirun on one machine.
#pragma once

#include <string>
#include <vector>

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

// Replaces this process with the MPI launcher; throws a runtime Error if that fails.
[[noreturn]] void relaunch_under_mpi(int nranks);

// The MPI launcher and flavor this build was configured with.
std::string build_mpi_launcher();
std::string build_mpi_flavor();

// Set in the environment of a re-executed run so that a rank which does not find itself
// under MPI (e.g. a launcher of the other MPI) fails instead of re-executing again.
inline constexpr const char* kRelaunchedEnv = "COMMBENCH_RELAUNCHED";

}  // namespace cb
