#include "launch/launcher_child.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/checked_write.hpp"
#include "common/error.hpp"
#include "launch/job_guard.hpp"
#include "launch/launcher_message.hpp"
#include "launch/stop_signals.hpp"

namespace cb {

namespace {

struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (::pipe2(fd, O_CLOEXEC) != 0)
      runtime_error("cannot create a pipe: {}", std::strerror(errno));
  }
  ~Pipe() {
    for (int f : fd) {
      if (f >= 0) ::close(f);
    }
  }
};

// Splits the launcher's stderr into lines: the ranks' own are passed on at once, the rest kept.
class StderrLines {
 public:
  StderrLines(std::vector<std::string>& chatter, std::function<void(std::string_view)> pass)
      : chatter_(chatter), pass_(std::move(pass)) {}
  void feed(const char* data, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      line_ += data[i];
      if (data[i] == '\n' || data[i] == '\r') flush_line();
    }
  }
  void finish() {
    if (!line_.empty()) flush_line();
  }

 private:
  void flush_line() {
    if (line_.rfind("commbench:", 0) == 0) {
      if (pass_) {
        pass_(line_);
      } else {
        ssize_t ignored = ::write(STDERR_FILENO, line_.data(), line_.size());
        (void)ignored;
      }
    } else {
      std::string kept = line_;
      while (!kept.empty() && (kept.back() == '\n' || kept.back() == '\r')) kept.pop_back();
      chatter_.push_back(kept);  // blank lines too: they end a help message's paragraph
    }
    line_.clear();
  }
  std::vector<std::string>& chatter_;
  std::function<void(std::string_view)> pass_;
  std::string line_;
};

}  // namespace

LauncherOutcome run_launcher_child(const LauncherCommand& command) {
  LauncherOutcome out;
  Pipe out_pipe, err_pipe;
  StopSignals signals;
  std::fflush(nullptr);
  std::vector<char*> argv;
  for (const auto& a : command.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0)
    runtime_error("cannot start {}: fork failed: {}", command.argv[0], std::strerror(errno));
  if (pid == 0) {
    int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);  // a background group must not read a tty
    ::dup2(out_pipe.fd[1], STDOUT_FILENO);
    ::dup2(err_pipe.fd[1], STDERR_FILENO);
    // Its own process group under a guard, as every job commbench starts: a stop reaches
    // whatever the launcher started, and when commbench dies (SIGKILL included) the launcher
    // gets SIGTERM and what has not ended 5 s later is killed; a launcher whose own SIGTERM
    // handling waits on its ranks does not run on (the ranks notice too: rank_watch.hpp).
    guard_job(parent, command.own_dir, [&] {
      for (int s : {SIGINT, SIGTERM, SIGHUP}) ::signal(s, SIG_DFL);
      for (const auto& [k, v] : command.env_defaults) ::setenv(k.c_str(), v.c_str(), 0);
      for (const auto& [k, v] : command.env) ::setenv(k.c_str(), v.c_str(), 1);
      ::execv(argv[0], argv.data());
      std::string msg = std::string("cannot start ") + argv[0] + ": " + std::strerror(errno) + "\n";
      ssize_t ignored = ::write(STDERR_FILENO, msg.data(), msg.size());
      (void)ignored;
      ::_exit(127);
    });
  }
  ::close(out_pipe.fd[1]);
  out_pipe.fd[1] = -1;
  ::close(err_pipe.fd[1]);
  err_pipe.fd[1] = -1;

  StderrLines lines(out.chatter, command.pass_stderr);
  // The launcher's stdout may carry the run's document; hydra's banner about a dead rank is not
  // part of it.
  HydraBannerFilter banner;
  auto pass_stdout = [&](std::string_view data) {
    if (!out.stdout_error.empty() || data.empty()) return;
    try {
      if (command.pass_stdout) {
        command.pass_stdout(data);
      } else {
        write_all(STDOUT_FILENO, data, "standard output");
      }
    } catch (const Error& e) {
      out.stdout_error = e.what();  // keep draining, so that the ranks are not blocked
    }
  };
  using Clock = std::chrono::steady_clock;
  Clock::time_point kill_at{};
  bool out_open = true, err_open = true, exited = false;
  // The launcher's end wakes the poll below, which otherwise sleeps until output or a signal
  // comes (nothing of commbench's wakes up while the ranks measure); without a pidfd it looks
  // every 50 ms.
  int pidfd = -1;
#ifdef SYS_pidfd_open
  pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#endif
  char buf[65536];
  while (out_open || err_open || !exited) {
    if (signals.caught() && !out.stop_signal) {
      out.stop_signal = signals.caught();
      stop_process_group(pid, SIGTERM);
      kill_at = Clock::now() + std::chrono::seconds(5);
    }
    if (out.stop_signal && !exited && Clock::now() >= kill_at) stop_process_group(pid, SIGKILL);
    if (!exited) {
      int status = 0;
      pid_t w = ::waitpid(pid, &status, WNOHANG);
      if (w == pid) {
        exited = true;
        out.wait_status = status;
      }
    }
    struct pollfd fds[3];
    int n = 0;
    if (out_open) fds[n++] = {out_pipe.fd[0], POLLIN, 0};
    if (err_open) fds[n++] = {err_pipe.fd[0], POLLIN, 0};
    const int streams = n;
    if (!exited && pidfd >= 0) fds[n++] = {pidfd, POLLIN, 0};
    if (n == 0) {
      ::usleep(10000);
      continue;
    }
    // Once the launcher has gone, whatever its orphans still hold open is not waited for long.
    int timeout = exited ? 200 : pidfd >= 0 ? -1 : 50;
    if (out.stop_signal && !exited) timeout = 100;  // until SIGKILL is due
    int ready = ::poll(fds, static_cast<nfds_t>(n), timeout);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0 && exited) break;
    for (int i = 0; i < streams; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = ::read(fds[i].fd, buf, sizeof(buf));
      if (got < 0 && errno == EINTR) continue;
      const bool is_out = fds[i].fd == out_pipe.fd[0];
      if (got <= 0) {
        (is_out ? out_open : err_open) = false;
        continue;
      }
      if (!is_out) {
        lines.feed(buf, static_cast<std::size_t>(got));
      } else {
        pass_stdout(banner.feed(std::string_view(buf, static_cast<std::size_t>(got))));
      }
    }
  }
  lines.finish();
  pass_stdout(banner.finish());
  if (pidfd >= 0) ::close(pidfd);
  if (!exited) {
    ::waitpid(pid, &out.wait_status, 0);
  }
  return out;
}

}  // namespace cb
