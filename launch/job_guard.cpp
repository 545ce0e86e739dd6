#include "launch/job_guard.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <dirent.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "launch/proc_stat.hpp"

namespace cb {

namespace {

constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int kStopGraceS = 5;  // from the stop to SIGKILL of what is left

pid_t g_parent = 0;
std::string g_own_dir;  // the job's temporary directory, for commbench to remove

// The group has ended: nothing writes to the job's directory any more. Commbench removes it
// itself unless it died, and then this guard is the last one that knows it.
void remove_dir_of_dead_parent() {
  if (g_own_dir.empty() || ::getppid() == g_parent) return;
  std::error_code ec;
  std::filesystem::remove_all(g_own_dir, ec);
}

// Ends this process the way the launcher ended, so the parent reads the same status.
[[noreturn]] void end_like(int status) {
  remove_dir_of_dead_parent();
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    ::signal(sig, SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    ::sigprocmask(SIG_UNBLOCK, &one, nullptr);
    ::raise(sig);
  }
  ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

// The processes of this guard's group but itself that still run (zombies are over).
std::vector<pid_t> others_in_group() {
  std::vector<pid_t> out;
  const pid_t self = ::getpid();
  DIR* proc = ::opendir("/proc");
  if (!proc) return out;
  while (const dirent* e = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '\0' || pid == self) continue;
    const std::optional<ProcStat> s = read_proc_stat(static_cast<pid_t>(pid));
    if (s && s->pgrp == self && s->state != 'Z' && s->state != 'X') {
      out.push_back(static_cast<pid_t>(pid));
    }
  }
  ::closedir(proc);
  return out;
}

// The launcher has ended; what it started in the group may not have (a wrapper script that died
// of the stop while the mpirun it started ignores SIGTERM, a daemon it left behind). The guard
// stays until the group is empty: SIGTERM now (unless sent), SIGKILL to each member at `kill_at`.
[[noreturn]] void end_with_group(int status, bool term_sent, const timespec& kill_at) {
  if (others_in_group().empty()) end_like(status);
  if (!term_sent) ::kill(0, SIGTERM);  // blocked here: it stays pending in the guard
  while (true) {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    const std::vector<pid_t> others = others_in_group();
    if (others.empty()) end_like(status);
    if (now.tv_sec > kill_at.tv_sec ||
        (now.tv_sec == kill_at.tv_sec && now.tv_nsec >= kill_at.tv_nsec)) {
      for (pid_t pid : others) ::kill(pid, SIGKILL);
      end_like(status);
    }
    const timespec tick = {0, 20'000'000};
    ::nanosleep(&tick, nullptr);
  }
}

timespec seconds_from_now(int seconds) {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  t.tv_sec += seconds;
  return t;
}

}  // namespace

void guard_job(pid_t parent, const std::string& own_dir, const std::function<void()>& start) {
  g_parent = parent;
  g_own_dir = own_dir;
  ::setpgid(0, 0);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  for (int s : kStopSignals) sigaddset(&set, s);
  ::sigprocmask(SIG_BLOCK, &set, nullptr);  // taken with sigtimedwait below
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) ::_exit(1);
  pid_t launcher = ::fork();
  if (launcher < 0) ::_exit(127);
  if (launcher == 0) {
    ::prctl(PR_SET_PDEATHSIG, 0);
    ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
    start();
    ::_exit(127);
  }
  bool stopping = false;
  timespec kill_at{};
  while (true) {
    int status = 0;
    if (::waitpid(launcher, &status, WNOHANG) == launcher) {
      end_with_group(status, stopping, stopping ? kill_at : seconds_from_now(kStopGraceS));
    }
    // A stop (from commbench, or the kernel on its death) goes to the whole group; what has
    // not ended 5 s later is killed.
    const timespec wait = {stopping ? kStopGraceS : 3600, 0};
    siginfo_t info{};
    const int sig = ::sigtimedwait(&set, &info, &wait);
    if (sig < 0 && errno == EAGAIN && stopping) {
      // Every member but this guard, which stays to reap the launcher and end like it.
      for (pid_t pid : others_in_group()) ::kill(pid, SIGKILL);
    } else if (sig > 0 && sig != SIGCHLD && !stopping) {
      stopping = true;
      kill_at = seconds_from_now(kStopGraceS);
      // commbench's own stop was sent to the whole group already; its death, or a signal from
      // elsewhere, is passed on (this process has them blocked: it stays to reap the launcher).
      if (::getppid() != parent || info.si_pid != parent) ::kill(0, SIGTERM);
    }
  }
}

}  // namespace cb
