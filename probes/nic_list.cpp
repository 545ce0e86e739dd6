#include "probes/nic_list.hpp"

#include <ifaddrs.h>
#include <net/if.h>

#include <algorithm>

#include "common/error.hpp"

namespace cb {

namespace {

bool loopback(const std::string& nic) {
  if (nic == "lo") return true;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return false;
  bool found = false;
  for (ifaddrs* a = list; a && !found; a = a->ifa_next)
    found = a->ifa_name && nic == a->ifa_name && (a->ifa_flags & IFF_LOOPBACK);
  ::freeifaddrs(list);
  return found;
}

}  // namespace

std::vector<std::string> parse_nic_list(const std::string& text) {
  std::vector<std::string> nics;
  for (std::size_t at = 0;;) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    std::string nic = text.substr(at, comma - at);
    if (nic.empty()) usage_error("invalid --nics '{}': an empty NIC name", text);
    if (std::find(nics.begin(), nics.end(), nic) != nics.end())
      usage_error("invalid --nics '{}': {} is named twice", text, nic);
    if (loopback(nic))
      usage_error("invalid --nics '{}': {} is a loopback interface, no link between hosts", text,
                  nic);
    nics.push_back(std::move(nic));
    if (comma == text.size()) return nics;
    at = comma + 1;
  }
}

}  // namespace cb
