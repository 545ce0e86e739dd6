#include "collectives/gloo/gloo_transport.hpp"

#include <arpa/inet.h>
#include <gloo/transport/tcp/device.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <set>

#include "collectives/gloo/gloo_errors.hpp"
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
  return iface.empty() ? "TCP on " + hostname : "TCP on interface " + iface;
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

TransportChoice choose_transport(const std::string& iface, bool single_host) {
  TransportChoice c;
  if (!iface.empty()) {
    check_interface(iface);
    c.iface = iface;
    return c;
  }
  if (single_host) {
    c.hostname = "127.0.0.1";
    return c;
  }
  const std::string host = host_name("localhost");
  const std::string addr = resolve_ipv4(host);
  if (addr.empty()) {
    usage_error("host name '{}' does not resolve to an IPv4 address: pass --gloo-iface NAME ({})",
                host, interface_names());
  }
  if (addr.rfind("127.", 0) == 0) {
    usage_error(
        "ranks span several hosts but host name '{}' resolves to loopback address {}: pass "
        "--gloo-iface NAME ({})",
        host, addr, interface_names());
  }
  c.hostname = addr;
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
