#include "collectives/launch/rank_watch.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "collectives/launch/rank_status.hpp"
#include "collectives/launch/stop_signals.hpp"
#include "common/host_name.hpp"

namespace cb {

namespace {

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

void RankWatch::loop() {
  block_stop_signals_in_this_thread();  // they must interrupt the launcher's own wait
  std::vector<pollfd> fds = {{stop_pipe_[0], POLLIN, 0}, {listen_fd_, POLLIN, 0}};
  std::vector<int> rank_of = {-1, -1};  // per fds entry; -2: connected, rank not read yet
  while (true) {
    if (::poll(fds.data(), fds.size(), -1) < 0) continue;
    const std::int64_t now = status_clock_ns();
    if (fds[0].revents) break;
    if (fds[1].revents & POLLIN) {
      int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) {
        fds.push_back({fd, POLLIN, 0});
        rank_of.push_back(-2);
      }
    }
    for (std::size_t i = 2; i < fds.size();) {
      if (!fds[i].revents) {
        ++i;
        continue;
      }
      if (rank_of[i] == -2) {
        Hello hello{};
        // The rank sends its hello in one write right after connecting.
        if (::recv(fds[i].fd, &hello, sizeof(hello), MSG_WAITALL) ==
            static_cast<ssize_t>(sizeof(hello))) {
          rank_of[i] = hello.rank;
          hello.host[sizeof(hello.host) - 1] = '\0';
          std::lock_guard lock(mu_);
          hosts_[hello.rank] = hello.host;
          ++i;
          continue;
        }
      }
      char byte = 0;
      ssize_t n = rank_of[i] == -2 ? 0 : ::read(fds[i].fd, &byte, 1);
      if (n > 0) {
        ++i;
        continue;
      }
      if (rank_of[i] >= 0) {
        std::lock_guard lock(mu_);
        ended_.emplace(rank_of[i], now);
      }
      ::close(fds[i].fd);
      fds.erase(fds.begin() + static_cast<long>(i));
      rank_of.erase(rank_of.begin() + static_cast<long>(i));
    }
  }
  for (std::size_t i = 2; i < fds.size(); ++i) ::close(fds[i].fd);
}

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
  }
  // Left open on purpose: the kernel closes it when this process ends.
}

}  // namespace cb
