// The NICs `probe links --per-nic` measures one at a time: netdevs with an IPv4 address.
#pragma once

#include <string>
#include <vector>

namespace cb {

// This host's netdevs with an IPv4 address, loopback left out, sorted by name.
std::vector<std::string> nics_with_address();

// The IPv4 address of netdev `nic` on this host (the first), or empty when it has none.
std::string nic_address(const std::string& nic);

// What a rail is made of, for messages: {"NIC", "with an IPv4 address"} (TCP passes) or {"HCA",
// "with an active port"} (NCCL passes).
struct RailKind {
  const char* name = "NIC";
  const char* having = "with an IPv4 address";
};

// The rails: the NICs every host has (`per_host[i]` is host i's list), sorted by name; with a
// `wanted` list, that list in its order. A wanted NIC some host lacks is a usage error naming
// the NIC and the host (`hosts[i]`).
std::vector<std::string> choose_rails(const std::vector<std::vector<std::string>>& per_host,
                                      const std::vector<std::string>& hosts,
                                      const std::vector<std::string>& wanted, RailKind kind = {});

// "h3 mlx5_8" for every NIC of a host that is not a rail (hosts whose NIC names differ), in host
// order.
std::vector<std::string> nics_off_the_rails(const std::vector<std::vector<std::string>>& per_host,
                                            const std::vector<std::string>& hosts,
                                            const std::vector<std::string>& rails);

}  // namespace cb
