#include "collectives/launch/job_guard.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

namespace cb {

namespace {

constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};

// Ends this process the way the launcher ended, so the parent reads the same status.
[[noreturn]] void end_like(int status) {
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

}  // namespace

void guard_job(pid_t parent, const std::function<void()>& start) {
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
  while (true) {
    int status = 0;
    if (::waitpid(launcher, &status, WNOHANG) == launcher) end_like(status);
    // A stop (from commbench, or the kernel on its death) goes to the whole group; what has
    // not ended 5 s later is killed.
    const timespec wait = {stopping ? 5 : 3600, 0};
    siginfo_t info{};
    const int sig = ::sigtimedwait(&set, &info, &wait);
    if (sig < 0 && errno == EAGAIN && stopping) {
      ::kill(0, SIGKILL);
    } else if (sig > 0 && sig != SIGCHLD && !stopping) {
      stopping = true;
      // commbench's own stop was sent to the whole group already; its death, or a signal from
      // elsewhere, is passed on (this process has them blocked: it stays to reap the launcher).
      if (::getppid() != parent || info.si_pid != parent) ::kill(0, SIGTERM);
    }
  }
}

}  // namespace cb
