#include "collectives/backends/gloo/gloo_transport.hpp"

#include <arpa/inet.h>
#include <gloo/transport/tcp/device.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <set>

#include "collectives/backends/gloo/gloo_errors.hpp"
#include "collectives/backends/gloo/gloo_route.hpp"
#include "common/error.hpp"
#include "common/host_name.hpp"

namespace cb::gloo_backend {

namespace {

// The IPv4 address `host` resolves to, or empty.
std::string resolve_ipv4(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || !res) return {};
  char text[INET_ADDRSTRLEN] = {};
  auto* sin = reinterpret_cast<sockaddr_in*>(res->ai_addr);
  ::inet_ntop(AF_INET, &sin->sin_addr, text, sizeof(text));
  ::freeaddrinfo(res);
  return text;
}

bool has_ipv4_address(const std::string& iface) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return false;
  bool found = false;
  for (ifaddrs* a = list; a; a = a->ifa_next) {
    if (a->ifa_addr && a->ifa_addr->sa_family == AF_INET && iface == a->ifa_name) found = true;
  }
  ::freeifaddrs(list);
  return found;
}

}  // namespace

std::string TransportChoice::describe() const {
  if (!iface.empty()) return "TCP on interface " + iface;
  return "TCP on " + hostname + (reason.empty() ? "" : " (" + reason + ")");
}

std::string interface_names() {
  std::set<std::string> names;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) == 0) {
    for (ifaddrs* a = list; a; a = a->ifa_next) names.insert(a->ifa_name);
    ::freeifaddrs(list);
  }
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none found" : out;
}

void check_interface(const std::string& iface) {
  if (::if_nametoindex(iface.c_str()) == 0) {
    usage_error("unknown --gloo-iface '{}': this host has {}", iface, interface_names());
  }
  if (!has_ipv4_address(iface)) {
    usage_error("--gloo-iface '{}' has no IPv4 address: this host has {}", iface,
                interface_names());
  }
}

TransportChoice choose_transport(const std::string& iface) {
  TransportChoice c;
  if (!iface.empty()) {
    check_interface(iface);
    c.iface = iface;
    return c;
  }
  c.hostname = "127.0.0.1";
  return c;
}

TransportChoice choose_transport_by_route(Control& control, const std::vector<std::string>& hosts) {
  const int rank = control.rank();
  // Rank 0's candidates reach every rank; the others' lists are not needed.
  std::string mine;
  if (rank == 0) mine = join_addresses(candidate_addresses(resolve_ipv4(host_name("localhost"))));
  const std::vector<std::string> rank0 = split_addresses(control.allgather(mine).front());
  const bool with_rank0 = hosts[static_cast<std::size_t>(rank)] == hosts.front();
  const int vote = reachable_index(rank0, with_rank0, route_source);
  std::vector<int> votes;
  for (const auto& v : control.allgather(std::to_string(vote))) votes.push_back(std::stoi(v));
  const int agreed = agreed_index(votes);
  if (rank0.empty()) {
    usage_error(
        "ranks span several hosts but rank 0's host {} has no IPv4 address outside "
        "127.0.0.0/8: pass --gloo-iface NAME",
        hosts.front());
  }
  std::string missing;
  for (std::size_t r = 0; r < votes.size(); ++r) {
    if (agreed < 0 || votes[r] < 0)
      missing += fmt::format("{}{} (rank {})", missing.empty() ? "" : ", ", hosts[r], r);
  }
  if (!missing.empty()) {
    usage_error("no route from {} to rank 0's host {} (addresses {}): pass --gloo-iface NAME",
                missing, hosts.front(), join_addresses(rank0));
  }
  const std::string& target = rank0[static_cast<std::size_t>(agreed)];
  TransportChoice c;
  c.hostname = rank == 0 ? target : route_source(target);
  if (c.hostname.empty())
    usage_error("no route from {} to rank 0's address {}: pass --gloo-iface NAME",
                hosts[static_cast<std::size_t>(rank)], target);
  c.reason = rank == 0 ? "rank 0's address" : "route to rank 0's " + target;
  return c;
}

std::shared_ptr<::gloo::transport::Device> make_device(const TransportChoice& choice) {
  static std::mutex mu;
  static std::map<std::pair<std::string, std::string>, std::weak_ptr<::gloo::transport::Device>>
      live;
  std::lock_guard lock(mu);
  auto& slot = live[{choice.iface, choice.hostname}];
  if (auto device = slot.lock()) return device;
  ::gloo::transport::tcp::attr attr;
  attr.iface = choice.iface;
  attr.hostname = choice.hostname;
  attr.ai_family = AF_INET;
  auto device = guarded("device creation (" + choice.describe() + ")",
                        [&] { return ::gloo::transport::tcp::CreateDevice(attr); });
  slot = device;
  return device;
}

std::shared_ptr<::gloo::rendezvous::Context> connect(
    ::gloo::rendezvous::Store& store, std::shared_ptr<::gloo::transport::Device>& device, int rank,
    int size, std::chrono::milliseconds timeout) {
  auto context = std::make_shared<::gloo::rendezvous::Context>(rank, size);
  context->setTimeout(timeout);
  guarded("rendezvous", [&] { context->connectFullMesh(store, device); });
  return context;
}

std::chrono::milliseconds gloo_timeout(double timeout_seconds) {
  return std::chrono::milliseconds(static_cast<long long>((2 * timeout_seconds + 5.0) * 1000.0));
}

}  // namespace cb::gloo_backend
