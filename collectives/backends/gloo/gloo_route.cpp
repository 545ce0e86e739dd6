#include "collectives/backends/gloo/gloo_route.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <map>

namespace cb::gloo_backend {

namespace {

bool is_loopback(const std::string& addr) {
  return addr.rfind("127.", 0) == 0;
}

}  // namespace

std::vector<std::string> candidate_addresses(const std::string& preferred) {
  std::vector<std::string> out;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return out;
  for (ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET) continue;
    char text[INET_ADDRSTRLEN] = {};
    auto* sin = reinterpret_cast<sockaddr_in*>(a->ifa_addr);
    ::inet_ntop(AF_INET, &sin->sin_addr, text, sizeof(text));
    std::string addr = text;
    if (!is_loopback(addr) && std::find(out.begin(), out.end(), addr) == out.end())
      out.push_back(addr);
  }
  ::freeifaddrs(list);
  auto it = std::find(out.begin(), out.end(), preferred);
  if (it != out.end()) std::rotate(out.begin(), it, it + 1);
  return out;
}

std::string route_source(const std::string& peer) {
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(9);  // any port: connect() on a UDP socket only looks up the route
  if (::inet_pton(AF_INET, peer.c_str(), &to.sin_addr) != 1) return {};
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return {};
  std::string out;
  sockaddr_in from{};
  socklen_t len = sizeof(from);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&from), &len) == 0) {
    char text[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &from.sin_addr, text, sizeof(text));
    out = text;
  }
  ::close(fd);
  return out;
}

std::string join_addresses(const std::vector<std::string>& addrs) {
  std::string out;
  for (const auto& a : addrs) {
    if (!out.empty()) out += ',';
    out += a;
  }
  return out;
}

std::vector<std::string> split_addresses(const std::string& text) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find(',', at);
    if (end == std::string::npos) end = text.size();
    if (end > at) out.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

int reachable_index(const std::vector<std::string>& rank0_addrs, bool same_host_as_rank0,
                    const std::function<std::string(const std::string&)>& route) {
  for (std::size_t i = 0; i < rank0_addrs.size(); ++i) {
    std::string src = route(rank0_addrs[i]);
    if (src.empty()) continue;
    if (same_host_as_rank0 || !is_loopback(src)) return static_cast<int>(i);
  }
  return -1;
}

int agreed_index(const std::vector<int>& votes) {
  std::map<int, int> count;
  for (int v : votes)
    if (v >= 0) ++count[v];
  int best = -1, best_count = 0;
  for (const auto& [index, n] : count) {
    if (n > best_count) {
      best = index;
      best_count = n;
    }
  }
  return best;
}

}  // namespace cb::gloo_backend
