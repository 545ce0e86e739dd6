#include "launch/local_launcher.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <thread>

#include "common/error.hpp"
#include "core/process_start.hpp"
#include "launch/job.hpp"
#include "launch/progress_relay.hpp"
#include "launch/rank_exits.hpp"
#include "launch/rank_status.hpp"
#include "launch/rank_watch.hpp"
#include "launch/stop_signals.hpp"
#include "launch/temp_dir.hpp"

namespace cb {

namespace {

// A rank's view of the launcher's progress display: the socket to report to, and the pipe that
// replaces its stderr (-1: stderr as it is).
struct RankProgress {
  std::string socket;
  int stderr_fd = -1;
  int stdout_fd = -1;
};

pid_t start_rank(const std::vector<std::string>& args, int rank, int nranks, const std::string& dir,
                 const std::string& watch, pid_t launcher, const RankProgress& progress) {
  static const std::string exe = own_executable();  // so ps names the ranks commbench
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const std::string rank_s = std::to_string(rank), size_s = std::to_string(nranks);
  pid_t pid = ::fork();
  if (pid < 0) runtime_error("cannot start rank {}: fork failed: {}", rank, std::strerror(errno));
  if (pid > 0) return pid;
  // Child: die with the launcher, even if it is killed with SIGKILL.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != launcher) ::_exit(1);
  ::setenv(kLocalRankEnv, rank_s.c_str(), 1);
  ::setenv(kLocalSizeEnv, size_s.c_str(), 1);
  ::setenv(kLocalStoreEnv, dir.c_str(), 1);
  ::setenv(kRankStatusEnv, dir.c_str(), 1);
  if (!watch.empty()) ::setenv(kRankWatchEnv, watch.c_str(), 1);
  if (!progress.socket.empty()) ::setenv(kProgressEnv, progress.socket.c_str(), 1);
  if (progress.stderr_fd >= 0) ::dup2(progress.stderr_fd, STDERR_FILENO);
  if (progress.stdout_fd >= 0) ::dup2(progress.stdout_fd, STDOUT_FILENO);
  ::execv(exe.c_str(), argv.data());
  const char msg[] = "commbench: cannot start a rank: exec of this program failed\n";
  ssize_t ignored = ::write(STDERR_FILENO, msg, sizeof(msg) - 1);
  (void)ignored;
  ::_exit(127);
}

}  // namespace

std::vector<std::string> own_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  std::string cur;
  for (char c : all) {
    if (c == '\0') {
      args.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) args.push_back(cur);
  if (args.empty()) runtime_error("cannot read this process's command line");
  return args;
}

int run_local_ranks(const LocalLaunchOptions& o) {
  using Clock = std::chrono::steady_clock;
  TempDir dir;
  dir.check_writable("rendezvous");
  // Sees a rank stopped (SIGSTOP, a debugger) so that the timeout names it, not the rank that
  // waited for it, and resumes it once a peer has ended so that the stop below ends it.
  RankWatch watch(dir.path());
  StopSignals signals;
  std::optional<ProgressRelay> relay;
  RankProgress rank_progress;
  if (o.progress != ProgressDisplay::Style::Off) {
    relay.emplace(o.progress, dir.path());
    if (!relay->path().empty()) {
      rank_progress = {relay->path(), relay->rank_stderr(), relay->rank_stdout()};
    }
  }
  const pid_t self = ::getpid();
  std::map<pid_t, int> running;  // pid -> rank
  std::vector<RankExit> exits;
  std::vector<std::int64_t> reaped_ns;  // when each of exits was seen
  bool stopping = false;
  int stop_phase = 0;  // 0: none, 1: SIGTERM sent, 2: SIGKILL sent
  Clock::time_point deadline{};

  auto signal_all = [&](int sig) {
    for (const auto& [pid, rank] : running) ::kill(pid, sig);
  };
  auto begin_stop = [&](double after_seconds) {
    if (stopping) return;
    stopping = true;
    deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(after_seconds));
  };

  for (int r = 0; r < o.nranks; ++r) {
    try {
      pid_t pid = start_rank(o.args, r, o.nranks, dir.path(), watch.path(), self, rank_progress);
      running[pid] = r;
    } catch (const Error&) {
      signal_all(SIGKILL);
      for (const auto& [pid, rank] : running) ::waitpid(pid, nullptr, 0);
      throw;
    }
  }

  if (relay) relay->close_rank_stderr();

  while (!running.empty()) {
    if (signals.caught() && !stopping) {
      signal_all(SIGTERM);
      stop_phase = 1;
      begin_stop(1.0);
    }
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, stopping ? WNOHANG : 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;  // ECHILD: nothing left to wait for
    }
    if (pid == 0) {  // stopping, nothing exited yet
      if (Clock::now() >= deadline && stop_phase < 2) {
        signal_all(stop_phase == 0 ? SIGTERM : SIGKILL);
        ++stop_phase;
        deadline = Clock::now() + std::chrono::seconds(1);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      continue;
    }
    auto it = running.find(pid);
    if (it == running.end()) continue;
    RankExit e;
    e.rank = it->second;
    if (WIFSIGNALED(status)) {
      e.signaled = true;
      e.code = WTERMSIG(status);
      e.stopped_by_launcher = stop_phase > 0;
    } else {
      e.code = WEXITSTATUS(status);
    }
    running.erase(it);
    exits.push_back(e);
    reaped_ns.push_back(status_clock_ns());
    if (e.signaled || e.code != 0) begin_stop(o.grace_seconds);
  }

  // The ranks' last lines shown, the bar erased before any verdict.
  const std::string stdout_error = relay ? relay->finish() : std::string();
  relay.reset();
  if (signals.caught()) {
    int sig = signals.caught();
    signals.clear();
    runtime_error("interrupted by signal {} ({}); ranks stopped", sig, ::strsignal(sig));
  }
  attach_rank_messages(dir.path(), exits, reaped_ns);
  const bool failed = std::any_of(exits.begin(), exits.end(),
                                  [](const RankExit& e) { return e.signaled || e.code != 0; });
  if (failed) watch.wait_for_all_ended(std::chrono::seconds(2));
  const int code = report_rank_verdict(exits, watch.stopped());
  if (code == 0 && !stdout_error.empty()) runtime_error("{}", stdout_error);
  return code;
}

}  // namespace cb
