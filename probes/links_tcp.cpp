#include "probes/links_tcp.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/tcp.h>  // struct tcp_info with tcpi_bytes_acked (glibc's lacks it)
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "common/median.hpp"

namespace cb {

namespace {

using Clock = std::chrono::steady_clock;

// How long a receiver waits beyond the sender's bound (connection set-up, scheduling).
constexpr double kGraceSeconds = 1.0;
// How often a streaming sender looks at the acknowledged bytes when the socket is full.
constexpr int kPollMicroseconds = 100;

// Milliseconds left until `deadline`, at least 0.
int ms_left(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::max<std::int64_t>(0, left.count()));
}

bool wait_for(int fd, short events, Clock::time_point deadline) {
  pollfd p{fd, events, 0};
  for (;;) {
    int rc = ::poll(&p, 1, ms_left(deadline));
    if (rc > 0) return true;
    if (rc == 0 || errno != EINTR) return false;
  }
}

bool write_all(int fd, const void* data, std::size_t n, Clock::time_point deadline) {
  const char* at = static_cast<const char*>(data);
  while (n > 0) {
    if (!wait_for(fd, POLLOUT, deadline)) return false;
    ssize_t w = ::send(fd, at, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (w <= 0) return false;
    at += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

bool read_all(int fd, void* data, std::size_t n, Clock::time_point deadline) {
  char* at = static_cast<char*>(data);
  while (n > 0) {
    if (!wait_for(fd, POLLIN, deadline)) return false;
    ssize_t r = ::recv(fd, at, n, MSG_DONTWAIT);
    if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (r <= 0) return false;
    at += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

// Closes with a reset: what is still queued is dropped, not drained over a slow link.
void reset_close(int fd) {
  linger l{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  ::close(fd);
}

std::uint64_t bytes_acked(int fd) {
  tcp_info info{};
  socklen_t len = sizeof info;
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) return 0;
  return info.tcpi_bytes_acked;
}

void set_nodelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

sockaddr_in parse_endpoint(const std::string& text) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  auto colon = text.rfind(':');
  ::inet_pton(AF_INET, text.substr(0, colon).c_str(), &a.sin_addr);
  a.sin_port = htons(static_cast<std::uint16_t>(std::stoi(text.substr(colon + 1))));
  return a;
}

// Who is calling and which of their calls with this peer it is: a connection left over from a
// phase that timed out is told apart and dropped.
struct Hello {
  std::int32_t rank = 0;
  std::int32_t call = 0;
};

class TcpTransport : public PairTransport {
 public:
  TcpTransport(Control& control, std::string nic, const std::string& address, bool participant)
      : nic_(std::move(nic)), self_(control.rank()) {
    std::string endpoint;
    if (participant) {
      local_ = parse_endpoint(address + ":0");
      listen_ = socket_on_nic();
      int one = 1;
      ::setsockopt(listen_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      sockaddr_in at = local_;
      socklen_t len = sizeof at;
      if (::bind(listen_, reinterpret_cast<sockaddr*>(&at), sizeof at) != 0 ||
          ::listen(listen_, 64) != 0 ||
          ::getsockname(listen_, reinterpret_cast<sockaddr*>(&at), &len) != 0) {
        runtime_error("probe links: cannot listen on {} ({}): {}", address, nic_,
                      std::strerror(errno));
      }
      endpoint = address + ":" + std::to_string(ntohs(at.sin_port));
    }
    endpoints_ = control.allgather(endpoint);
  }

  ~TcpTransport() override {
    if (listen_ >= 0) ::close(listen_);
  }

  double bandwidth(int me, int src, int dst, const SampleLimits& l) override {
    const auto deadline = Clock::now() + seconds(phase_bound_seconds(l));
    if (me != src) {
      int fd = accept_from(src, deadline + seconds(kGraceSeconds));
      if (fd < 0) return 0;
      std::vector<char> sink(1 << 20);
      // Until the sender resets the connection, or its bound and the grace have passed.
      while (wait_for(fd, POLLIN, deadline + seconds(kGraceSeconds))) {
        ssize_t r = ::recv(fd, sink.data(), sink.size(), MSG_DONTWAIT);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) break;
      }
      reset_close(fd);
      return 0;
    }
    int fd = dial(dst, deadline);
    if (fd < 0) return 0;  // nothing acknowledged
    if (buf_.size() < l.bytes) buf_.assign(l.bytes, 1);
    const std::uint64_t target = l.bytes * static_cast<std::uint64_t>(l.window);
    double best = 0;
    bool broken = false;
    for (int k = 0; k <= l.samples && !broken; ++k) {
      const std::uint64_t a0 = bytes_acked(fd);
      const auto t0 = Clock::now();
      for (;;) {
        const std::uint64_t acked = bytes_acked(fd) - a0;
        const double t = seconds_since(t0);
        if (acked >= target || t >= l.seconds) {
          if (k > 0) best = std::max(best, static_cast<double>(acked) / t / 1e9);
          break;
        }
        ssize_t w = ::send(fd, buf_.data(), buf_.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w >= 0 || errno == EINTR) continue;
        if (errno != EAGAIN) {
          broken = true;  // the peer went away: what was acknowledged stands
          break;
        }
        pollfd p{fd, POLLOUT, 0};
        timespec ts{0, kPollMicroseconds * 1000L};
        ::ppoll(&p, 1, &ts, nullptr);
      }
    }
    reset_close(fd);
    return best;
  }

  double latency(int me, int a, int b, const SampleLimits& l) override {
    const auto t0 = Clock::now();
    const double bound = phase_bound_seconds(l);
    const auto deadline = t0 + seconds(bound);
    char msg[8] = {};
    if (me != a) {
      int fd = accept_from(a, deadline + seconds(kGraceSeconds));
      if (fd < 0) return 0;
      set_nodelay(fd);
      while (read_all(fd, msg, sizeof msg, deadline + seconds(kGraceSeconds)) && msg[0] != 0 &&
             write_all(fd, msg, sizeof msg, deadline + seconds(kGraceSeconds))) {
      }
      ::close(fd);
      return 0;
    }
    int fd = dial(b, deadline);
    if (fd < 0) return -1;
    set_nodelay(fd);
    const int warm = std::max(1, l.latency_iters / 10);
    const int iters = warm + l.samples * l.latency_iters;
    std::vector<double> us;
    for (int i = 0; i < iters && (i <= warm || seconds_since(t0) < bound); ++i) {
      msg[0] = 1;
      const auto s = Clock::now();
      if (!write_all(fd, msg, sizeof msg, deadline) || !read_all(fd, msg, sizeof msg, deadline))
        break;
      if (i >= warm) us.push_back(seconds_since(s) / 2.0 * 1e6);
    }
    msg[0] = 0;
    write_all(fd, msg, sizeof msg, deadline + seconds(kGraceSeconds));
    ::close(fd);
    return us.empty() ? -1 : median_of(us);
  }

 private:
  static Clock::duration seconds(double s) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  }

  // A TCP socket tied to this pass's NIC where the kernel allows it (SO_BINDTODEVICE needs
  // CAP_NET_RAW; without it the source address alone picks the route).
  int socket_on_nic() const {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) runtime_error("probe links: cannot create a TCP socket: {}", std::strerror(errno));
    if (nic_ != "lo")
      ::setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, nic_.c_str(),
                   static_cast<socklen_t>(nic_.size()));
    return fd;
  }

  // Connects from this NIC's address to `peer`'s endpoint and says hello; -1 when that does not
  // happen by `deadline`.
  int dial(int peer, Clock::time_point deadline) {
    int fd = socket_on_nic();
    sockaddr_in from = local_;
    from.sin_port = 0;
    sockaddr_in to = parse_endpoint(endpoints_[static_cast<std::size_t>(peer)]);
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    int err = 0;
    socklen_t len = sizeof err;
    const Hello hello{self_, ++calls_[peer]};
    if (::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0 ||
        (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0 && errno != EINPROGRESS) ||
        !wait_for(fd, POLLOUT, deadline) ||
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0 ||
        !write_all(fd, &hello, sizeof hello, deadline)) {
      reset_close(fd);
      return -1;
    }
    return fd;
  }

  // The connection `peer` makes for this call, or -1 by `deadline`; others are dropped.
  int accept_from(int peer, Clock::time_point deadline) {
    const std::int32_t call = ++calls_[peer];
    while (wait_for(listen_, POLLIN, deadline)) {
      int fd = ::accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) continue;
      Hello h;
      if (read_all(fd, &h, sizeof h, deadline) && h.rank == peer && h.call == call) return fd;
      reset_close(fd);
    }
    return -1;
  }

  std::string nic_;
  sockaddr_in local_{};
  int listen_ = -1;
  int self_ = 0;
  std::vector<std::string> endpoints_;
  std::map<int, std::int32_t> calls_;
  std::vector<char> buf_;
};

}  // namespace

std::unique_ptr<PairTransport> tcp_transport(Control& control, const std::string& nic,
                                             const std::string& address, bool participant) {
  return std::make_unique<TcpTransport>(control, nic, address, participant);
}

}  // namespace cb
