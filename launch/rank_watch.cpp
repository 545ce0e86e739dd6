#include "launch/rank_watch.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>
#include <vector>

#include "common/host_name.hpp"
#include "common/temp_files.hpp"
#include "launch/proc_stat.hpp"
#include "launch/rank_status.hpp"
#include "launch/stop_signals.hpp"

namespace cb {

namespace {

// Where the rank's connection is moved (below the usual limit of 1024 open files).
constexpr int kHighDescriptor = 1000;

// What a rank sends on connecting.
struct Hello {
  std::int32_t rank;
  char host[256];
};

}  // namespace

RankWatch::RankWatch(const std::string& dir) {
  std::string path = dir + "/watch.sock";
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) return;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) return;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(listen_fd_, 1024) != 0 || ::pipe2(stop_pipe_, O_CLOEXEC) != 0) {
    ::close(listen_fd_);
    listen_fd_ = -1;
    return;
  }
  path_ = path;
  thread_ = std::thread([this] { loop(); });
}

RankWatch::~RankWatch() {
  if (thread_.joinable()) {
    ssize_t ignored = ::write(stop_pipe_[1], "x", 1);
    (void)ignored;
    thread_.join();
  }
  for (int fd : {listen_fd_, stop_pipe_[0], stop_pipe_[1]}) {
    if (fd >= 0) ::close(fd);
  }
}

std::map<int, std::int64_t> RankWatch::ended() {
  std::lock_guard lock(mu_);
  return ended_;
}

std::map<int, std::string> RankWatch::hosts() {
  std::lock_guard lock(mu_);
  return hosts_;
}

std::map<int, double> RankWatch::stopped() {
  std::lock_guard lock(mu_);
  std::map<int, double> out;
  const std::int64_t now = status_clock_ns();
  for (const auto& [rank, span] : stops_) {
    auto e = ended_.find(rank);
    const std::int64_t end = e != ended_.end() ? e->second : now;
    const std::int64_t until = span.until_ns ? span.until_ns : end;
    // A stop that ended long before the rank did was not what held the job; one the watch
    // itself ended (a peer had ended) was, however long the rank then took to end, and so was
    // one its launcher ended to kill it (Open MPI sends SIGCONT and SIGTERM, then SIGKILL a
    // second later: a rank that ends in its SIGTERM handler is gone just after that second).
    if (until - span.since_ns >= 1'000'000'000 &&
        (span.resumed_here || end - until <= 2'000'000'000)) {
      out[rank] = static_cast<double>(until - span.since_ns) / 1e9;
    }
  }
  return out;
}

void RankWatch::look_for_stopped(const std::map<int, int>& pids, std::int64_t now) {
  for (const auto& [rank, pid] : pids) {
    const std::optional<ProcStat> stat = read_proc_stat(pid);
    if (!stat) continue;
    const bool stopped = stat->state == 'T' || stat->state == 't';
    std::lock_guard lock(mu_);
    auto it = stops_.find(rank);
    if (stopped && (it == stops_.end() || it->second.until_ns != 0)) {
      stops_[rank] = StopSpan{now, 0};
    } else if (stopped && !ended_.empty()) {
      // A peer has ended, so the job has too: the launcher's SIGTERM waits in a stopped
      // process, which would outlive the job; resumed, it ends.
      ::kill(pid, SIGCONT);
      it->second.until_ns = now;
      it->second.resumed_here = true;
    } else if (!stopped && it != stops_.end() && it->second.until_ns == 0) {
      it->second.until_ns = now;
    }
  }
}

void RankWatch::wait_for_all_ended(std::chrono::milliseconds limit) {
  std::unique_lock lock(mu_);
  ended_cv_.wait_for(lock, limit, [this] { return ended_.size() >= hosts_.size(); });
}

void RankWatch::loop() {
  block_stop_signals_in_this_thread();  // they must interrupt the launcher's own wait
  // epoll, not poll: it lists ready descriptors in the order they became ready, so ranks that
  // end between two wake-ups of this thread (a loaded machine) keep the order they ended in.
  int ep = ::epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) return;
  auto watch = [&](int fd) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    return ::epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0;
  };
  watch(stop_pipe_[0]);
  watch(listen_fd_);
  std::map<int, int> rank_of;  // connection -> rank; -2: connected, rank not read yet
  std::map<int, int> pid_of;   // connection -> the rank's process id
  std::vector<epoll_event> events(64);
  bool stop = false;
  std::int64_t last_look = 0;
  while (!stop) {
    int n =
        ::epoll_wait(ep, events.data(), static_cast<int>(events.size()), pid_of.empty() ? -1 : 500);
    if (n < 0) continue;
    const std::int64_t now = status_clock_ns();
    if (!pid_of.empty() && now - last_look >= 400'000'000) {
      std::map<int, int> pids;
      for (const auto& [fd, pid] : pid_of) pids[rank_of[fd]] = pid;
      look_for_stopped(pids, now);
      last_look = now;
    }
    for (int k = 0; k < n && !stop; ++k) {
      const int fd = events[static_cast<std::size_t>(k)].data.fd;
      if (fd == stop_pipe_[0]) {
        stop = true;
        continue;
      }
      if (fd == listen_fd_) {
        int c = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (c >= 0 && watch(c))
          rank_of[c] = -2;
        else if (c >= 0)
          ::close(c);
        continue;
      }
      auto it = rank_of.find(fd);
      if (it == rank_of.end()) continue;
      if (it->second == -2) {
        Hello hello{};
        // The rank sends its hello in one write right after connecting.
        if (::recv(fd, &hello, sizeof(hello), MSG_WAITALL) == static_cast<ssize_t>(sizeof(hello))) {
          it->second = hello.rank;
          hello.host[sizeof(hello.host) - 1] = '\0';
          ucred cred{};
          socklen_t len = sizeof(cred);
          if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.pid > 0) {
            pid_of[fd] = cred.pid;
          }
          std::lock_guard lock(mu_);
          hosts_[hello.rank] = hello.host;
          continue;
        }
      }
      char byte = 0;
      if (it->second != -2 && ::read(fd, &byte, 1) > 0) continue;
      if (it->second >= 0) {
        std::lock_guard lock(mu_);
        ended_.emplace(it->second, now + k);  // k: the kernel's order within this wake-up
        ended_cv_.notify_all();
      }
      ::epoll_ctl(ep, EPOLL_CTL_DEL, fd, nullptr);
      ::close(fd);
      rank_of.erase(it);
      pid_of.erase(fd);
    }
  }
  for (const auto& [fd, rank] : rank_of) ::close(fd);
  ::close(ep);
}

namespace {

// The parent never writes to the connection, so it becomes readable (end of file) or hangs up
// only when the commbench that started this rank has ended, SIGKILL included: the rank then
// stops instead of running on as an orphan of a launcher that outlives it (mpirun under a
// wrapper script, or one commbench's PDEATHSIG does not reach). Blocked in poll, this thread
// never wakes while the rank measures.
void stop_when_parent_ends(int fd) {
  try {
    std::thread([fd] {
      block_stop_signals_in_this_thread();
      ::pthread_setname_np(::pthread_self(), "cb-parent");
      pollfd p{fd, POLLIN, 0};
      while (::poll(&p, 1, -1) < 0 && errno == EINTR) {
      }
      remove_temp_files();
      static const char kLine[] =
          "commbench: the commbench that started this rank has ended; the rank stops\n";
      ssize_t ignored = ::write(STDERR_FILENO, kLine, sizeof(kLine) - 1);
      (void)ignored;
      ::_exit(1);
    }).detach();
  } catch (...) {
    // Without a thread the rank is only stopped by its launcher.
  }
}

}  // namespace

void connect_rank_watch(int rank) noexcept {
  static bool done = false;
  if (done) return;
  done = true;
  const char* path = std::getenv(kRankWatchEnv);
  sockaddr_un addr{};
  if (!path || !*path || std::strlen(path) >= sizeof(addr.sun_path)) return;
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, path);
  Hello hello{};
  hello.rank = rank;
  std::snprintf(hello.host, sizeof(hello.host), "%s", host_name().c_str());
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::write(fd, &hello, sizeof(hello)) != static_cast<ssize_t>(sizeof(hello))) {
    ::close(fd);
    return;
  }
  // A dying process closes its descriptors in order and the kernel then releases the sockets
  // last-closed first: on a high descriptor, this connection's end reaches the parent before the
  // rank's MPI connections end and before a peer can react to that.
  int high = ::fcntl(fd, F_DUPFD_CLOEXEC, kHighDescriptor);
  if (high >= 0) ::close(fd);
  stop_when_parent_ends(high >= 0 ? high : fd);
  // Left open on purpose: the kernel closes it when this process ends.
}

}  // namespace cb
