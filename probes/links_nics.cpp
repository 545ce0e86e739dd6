#include "probes/links_nics.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <algorithm>

#include "common/error.hpp"

namespace cb {

namespace {

// (netdev, address) for every IPv4 address outside loopback.
std::vector<std::pair<std::string, std::string>> ipv4_addresses() {
  std::vector<std::pair<std::string, std::string>> out;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return out;
  for (ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET || (a->ifa_flags & IFF_LOOPBACK))
      continue;
    char text[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr, text, sizeof text);
    out.emplace_back(a->ifa_name, text);
  }
  ::freeifaddrs(list);
  return out;
}

}  // namespace

std::vector<std::string> nics_with_address() {
  std::vector<std::string> out;
  for (const auto& [nic, addr] : ipv4_addresses())
    if (std::find(out.begin(), out.end(), nic) == out.end()) out.push_back(nic);
  std::sort(out.begin(), out.end());
  return out;
}

std::string nic_address(const std::string& nic) {
  // Loopback is allowed by name (tests on one machine); it has no other use here.
  if (nic == "lo") return "127.0.0.1";
  for (const auto& [name, addr] : ipv4_addresses())
    if (name == nic) return addr;
  return {};
}

std::vector<std::string> choose_rails(const std::vector<std::vector<std::string>>& per_host,
                                      const std::vector<std::string>& hosts,
                                      const std::vector<std::string>& wanted, RailKind kind) {
  auto has = [](const std::vector<std::string>& v, const std::string& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  if (!wanted.empty()) {
    for (const auto& nic : wanted) {
      for (std::size_t i = 0; i < per_host.size(); ++i) {
        if (has(per_host[i], nic)) continue;
        std::string theirs;
        for (const auto& n : per_host[i]) theirs += (theirs.empty() ? "" : ", ") + n;
        usage_error("--nics: host {} has no {} '{}' {} (it has: {})", hosts[i], kind.name, nic,
                    kind.having, theirs.empty() ? "none" : theirs);
      }
    }
    return wanted;
  }
  std::vector<std::string> out;
  if (per_host.empty()) return out;
  for (const auto& nic : per_host.front()) {
    if (std::all_of(per_host.begin(), per_host.end(),
                    [&](const std::vector<std::string>& v) { return has(v, nic); }))
      out.push_back(nic);
  }
  if (out.empty())
    usage_error("--per-nic: no {} name {} is on every host: give --nics", kind.name, kind.having);
  return out;
}

std::vector<std::string> nics_off_the_rails(const std::vector<std::vector<std::string>>& per_host,
                                            const std::vector<std::string>& hosts,
                                            const std::vector<std::string>& rails) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < per_host.size() && i < hosts.size(); ++i)
    for (const auto& nic : per_host[i])
      if (std::find(rails.begin(), rails.end(), nic) == rails.end())
        out.push_back(hosts[i] + " " + nic);
  return out;
}

}  // namespace cb
