#include "launch/env_wire.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cb::env_wire {

namespace {

int remaining_ms(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() <= 0 ? 0 : static_cast<int>(std::min<long long>(left.count(), 1 << 30));
}

bool write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

bool read_all(int fd, char* p, std::size_t n, Clock::time_point deadline) {
  while (n > 0) {
    pollfd pfd{fd, POLLIN, 0};
    int r = ::poll(&pfd, 1, remaining_ms(deadline));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    ssize_t got = ::recv(fd, p, n, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

std::string address_text(const sockaddr_in& sin) {
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &sin.sin_addr, text, sizeof(text));
  return text;
}

}  // namespace

bool send_frame(int fd, Type type, const std::string& payload) {
  const std::uint32_t n = htonl(static_cast<std::uint32_t>(payload.size() + 1));
  std::string buf(reinterpret_cast<const char*>(&n), sizeof n);
  buf.push_back(static_cast<char>(type));
  buf += payload;
  return write_all(fd, buf.data(), buf.size());
}

std::optional<Frame> read_frame(int fd, Clock::time_point deadline) {
  std::uint32_t n = 0;
  if (!read_all(fd, reinterpret_cast<char*>(&n), sizeof n, deadline)) return std::nullopt;
  n = ntohl(n);
  if (n == 0 || n > kMaxFrame) return std::nullopt;
  std::string body(n, '\0');
  if (!read_all(fd, body.data(), n, deadline)) return std::nullopt;
  return Frame{static_cast<Type>(body[0]), body.substr(1)};
}

std::string resolve(const std::string& host, std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &res); rc != 0 || !res) {
    error = rc != 0 ? ::gai_strerror(rc) : "no address";
    return {};
  }
  std::string out = address_text(*reinterpret_cast<sockaddr_in*>(res->ai_addr));
  ::freeaddrinfo(res);
  return out;
}

int listen_on(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_ANY);
  sin.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin) != 0 || ::listen(fd, 1024) != 0) {
    const int err = errno;
    ::close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

int connect_to(const std::string& address, int port, Clock::time_point deadline,
               std::string& error) {
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::inet_pton(AF_INET, address.c_str(), &sin.sin_addr) != 1) {
    error = "not an IPv4 address";
    return -1;
  }
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    error = std::strerror(errno);
    return -1;
  }
  int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin);
  if (rc != 0 && errno == EINPROGRESS) {
    pollfd pfd{fd, POLLOUT, 0};
    int r;
    do {
      r = ::poll(&pfd, 1, remaining_ms(deadline));
    } while (r < 0 && errno == EINTR);
    int err = ETIMEDOUT;
    socklen_t len = sizeof err;
    if (r > 0) ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    rc = err == 0 ? 0 : -1;
    errno = err;
  }
  if (rc != 0) {
    error = std::strerror(errno);
    ::close(fd);
    return -1;
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

std::string local_address(int fd) {
  sockaddr_in sin{};
  socklen_t len = sizeof sin;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&sin), &len) != 0) return {};
  return address_text(sin);
}

std::string peer_address(int fd) {
  sockaddr_in sin{};
  socklen_t len = sizeof sin;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&sin), &len) != 0) return {};
  return address_text(sin);
}

void detect_silence(int fd, int seconds) {
  int one = 1;
  int idle = std::max(1, seconds / 3);
  int interval = std::max(1, seconds / 6);
  int count = 3;
  unsigned user_timeout_ms = static_cast<unsigned>(seconds) * 1000u;
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
  ::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms, sizeof user_timeout_ms);
}

std::string join_lines(const std::initializer_list<std::string>& lines) {
  return join_lines(std::vector<std::string>(lines));
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) out += (i ? "\n" : "") + lines[i];
  return out;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    std::size_t nl = text.find('\n', start);
    out.push_back(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) return out;
    start = nl + 1;
  }
}

std::string pack(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) {
    const std::uint32_t n = htonl(static_cast<std::uint32_t>(p.size()));
    out.append(reinterpret_cast<const char*>(&n), sizeof n);
    out += p;
  }
  return out;
}

std::optional<std::vector<std::string>> unpack(const std::string& packed) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < packed.size()) {
    std::uint32_t n = 0;
    if (packed.size() - at < sizeof n) return std::nullopt;
    std::memcpy(&n, packed.data() + at, sizeof n);
    n = ntohl(n);
    at += sizeof n;
    if (packed.size() - at < n) return std::nullopt;
    out.push_back(packed.substr(at, n));
    at += n;
  }
  return out;
}

}  // namespace cb::env_wire
