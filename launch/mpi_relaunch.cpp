#include "launch/mpi_relaunch.hpp"

#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>

#include "common/error.hpp"
#include "common/temp_files.hpp"
#include "launch/job.hpp"
#include "launch/launcher_child.hpp"
#include "launch/launcher_message.hpp"
#include "launch/local_launcher.hpp"
#include "launch/progress_relay.hpp"
#include "launch/rank_status.hpp"
#include "launch/rank_watch.hpp"
#include "launch/temp_dir.hpp"

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
    // Its help messages are kept back (launcher_child.hpp): when the ranks cannot start, the
    // cause is in them (first_meaningful_message).
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

namespace {

// The signal that ended a rank that left no status, as the launcher's exit status tells it:
// Open MPI's mpirun exits with 128 + the signal, MPICH's hydra with the signal itself.
int signal_from_launcher(const std::string& flavor, int status) {
  if (WIFSIGNALED(status)) return WTERMSIG(status);
  const int code = WEXITSTATUS(status);
  if (code > 128 && code < 128 + NSIG) return code - 128;
  if (flavor != "Open MPI" && code > 5 && code < NSIG) return code;
  return 0;
}

bool has_status_file(const std::string& dir) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().filename().string().rfind("status-", 0) == 0) return true;
  }
  return false;
}

}  // namespace

int run_mpi_job(const MpiJob& job) {
  if (std::getenv(kRelaunchedEnv)) {
    runtime_error(
        "started by {} but MPI reports no launcher: is this binary built for another MPI?",
        build_mpi_launcher());
  }
  const std::string flavor = build_mpi_flavor();
  MpiLaunchPlan plan = plan_mpi_launch(flavor, build_mpi_launcher(), job.nranks, usable_cores(),
                                       ::geteuid() == 0, job.args);
  for (const auto& w : plan.warnings) std::cerr << "commbench: warning: " << w << "\n";
  TempDir status_dir;
  status_dir.check_writable("rank status");
  LauncherCommand cmd;
  cmd.argv = plan.argv;
  cmd.env_defaults = plan.env;
  cmd.env = job.env;
  cmd.env.emplace_back(kRelaunchedEnv, "1");
  cmd.env.emplace_back(kRankStatusEnv, status_dir.path());
  cmd.own_dir = status_dir.path();
  RankWatch watch(status_dir.path());
  if (!watch.path().empty()) cmd.env.emplace_back(kRankWatchEnv, watch.path());
  std::optional<ProgressRelay> relay;
  if (job.progress != ProgressDisplay::Style::Off) {
    relay.emplace(job.progress, status_dir.path());
    if (!relay->path().empty()) cmd.env.emplace_back(kProgressEnv, relay->path());
    cmd.pass_stderr = [&relay](std::string_view line) { relay->print(line); };
    cmd.pass_stdout = [&relay](std::string_view data) { relay->pass_stdout(data); };
  }
  LauncherOutcome out = run_launcher_child(cmd);
  if (relay) {  // the bar erased before any verdict
    if (std::string e = relay->finish(); !e.empty() && out.stdout_error.empty()) {
      out.stdout_error = e;
    }
    relay.reset();
  }

  if (out.stop_signal) {
    runtime_error("interrupted by signal {} ({}); ranks stopped", out.stop_signal,
                  ::strsignal(out.stop_signal));
  }
  const int status = out.wait_status;
  const int launcher_code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  if (status != 0) watch.wait_for_all_ended(std::chrono::seconds(2));
  std::vector<RankExit> exits =
      read_rank_status(status_dir.path(), job.nranks, signal_from_launcher(flavor, status),
                       launcher_code, watch.ended());
  if (status != 0 && watch.ended().empty() && !has_status_file(status_dir.path())) {
    // No rank got as far as reporting: the launcher itself failed; what it said explains it.
    const std::string said = first_meaningful_message(out.chatter);
    fail(ErrorKind::Runtime, "{} could not run the ranks (exit {}){}{}", plan.argv[0],
         launcher_code, said.empty() ? "" : ": ", said);
  }
  // A failure no rank explained (a rank that ended in MPI_Init) is explained by what the
  // launcher or the MPI library said.
  RunVerdict verdict =
      with_launcher_words(judge(exits), plan.argv[0], first_meaningful_message(out.chatter));
  verdict = name_stopped_rank(verdict, exits, watch.stopped(), watch.hosts());
  if (verdict.exit_code != 0 && !verdict.message.empty()) {
    std::cerr << "commbench: " << verdict.message << std::endl;
  }
  const int code = verdict.exit_code;
  if (code == 0 && status != 0) {
    runtime_error("{} exited with code {} although every rank succeeded", plan.argv[0],
                  launcher_code);
  }
  if (!out.stdout_error.empty() && code == 0) runtime_error("{}", out.stdout_error);
  return code;
}

int relaunch_under_mpi(int nranks, ProgressDisplay::Style progress) {
  MpiJob job;
  job.nranks = nranks;
  job.progress = progress;
  job.args = own_command_line();
  job.args[0] = own_executable();
  if (const char* tag = std::getenv(kTempTagEnv)) job.env.emplace_back(kTempTagEnv, tag);
  return run_mpi_job(job);
}

}  // namespace cb
