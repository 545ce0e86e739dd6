// The NICs `probe links --per-nic` measures one at a time: netdevs with an IPv4 address.
#pragma once

#include <string>
#include <vector>

namespace cb {

// This host's netdevs with an IPv4 address, loopback left out, sorted by name.
std::vector<std::string> nics_with_address();

// The IPv4 address of netdev `nic` on this host (the first), or empty when it has none.
std::string nic_address(const std::string& nic);

// The rails: the NICs every host has (`per_host[i]` is host i's list), sorted by name; with a
// `wanted` list, that list in its order. A wanted NIC some host lacks is a usage error naming
// the NIC and the host (`hosts[i]`).
std::vector<std::string> choose_rails(const std::vector<std::vector<std::string>>& per_host,
                                      const std::vector<std::string>& hosts,
                                      const std::vector<std::string>& wanted);

}  // namespace cb
