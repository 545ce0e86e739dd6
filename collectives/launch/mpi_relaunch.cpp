#include "collectives/launch/mpi_relaunch.hpp"

#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "collectives/launch/local_launcher.hpp"
#include "common/error.hpp"

#ifndef COMMBENCH_MPIEXEC_PATH
#define COMMBENCH_MPIEXEC_PATH "mpiexec"
#endif
#ifndef COMMBENCH_MPI_FLAVOR
#define COMMBENCH_MPI_FLAVOR "Open MPI"
#endif

namespace cb {

namespace {

int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) == 0) return CPU_COUNT(&set);
  long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

}  // namespace

std::string build_mpi_launcher() {
  return COMMBENCH_MPIEXEC_PATH;
}
std::string build_mpi_flavor() {
  return COMMBENCH_MPI_FLAVOR;
}

MpiLaunchPlan plan_mpi_launch(const std::string& flavor, const std::string& launcher, int nranks,
                              int cores, bool as_root,
                              const std::vector<std::string>& program_args) {
  MpiLaunchPlan p;
  p.argv.push_back(launcher);
  if (flavor == "Open MPI") {
    p.argv.insert(p.argv.end(), {"-np", std::to_string(nranks)});
    if (nranks > cores) {
      p.argv.insert(p.argv.end(), {"--oversubscribe", "--bind-to", "none"});
    } else {
      p.argv.insert(p.argv.end(), {"--bind-to", "core"});
    }
    if (as_root) {
      p.env.emplace_back("OMPI_ALLOW_RUN_AS_ROOT", "1");
      p.env.emplace_back("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    }
    p.env.emplace_back("OMPI_MCA_coll_tuned_use_dynamic_rules", "1");
  } else {
    p.argv.insert(p.argv.end(), {"-n", std::to_string(nranks)});
    p.env.emplace_back("MPIR_CVAR_COLLECTIVE_FALLBACK", "error");
    if (nranks > cores) {
      p.warnings.push_back(std::to_string(nranks) + " MPICH ranks on " + std::to_string(cores) +
                           " cores: oversubscribed MPICH is very slow; use -N " +
                           std::to_string(cores) + " or fewer");
    }
  }
  p.argv.insert(p.argv.end(), program_args.begin(), program_args.end());
  return p;
}

[[noreturn]] void relaunch_under_mpi(int nranks) {
  if (std::getenv(kRelaunchedEnv)) {
    runtime_error(
        "started by {} but MPI reports no launcher: is this binary built for another MPI?",
        build_mpi_launcher());
  }
  std::vector<std::string> args = own_command_line();
  args[0] = "/proc/self/exe";
  char exe[4096];
  ssize_t len = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (len > 0) args[0].assign(exe, static_cast<std::size_t>(len));
  MpiLaunchPlan plan = plan_mpi_launch(build_mpi_flavor(), build_mpi_launcher(), nranks,
                                       usable_cores(), ::geteuid() == 0, args);
  for (const auto& w : plan.warnings) std::cerr << "commbench: warning: " << w << "\n";
  for (const auto& [k, v] : plan.env) ::setenv(k.c_str(), v.c_str(), 0);
  ::setenv(kRelaunchedEnv, "1", 1);
  std::vector<char*> argv;
  for (auto& a : plan.argv) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::cout.flush();
  std::cerr.flush();
  ::execv(plan.argv[0].c_str(), argv.data());
  runtime_error("cannot start {}: {}", plan.argv[0], std::strerror(errno));
}

}  // namespace cb
