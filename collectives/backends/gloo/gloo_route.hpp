// Which address Gloo listens on when ranks span hosts and no --gloo-iface is given: host names
// need not resolve (many clusters, emulated hosts), so every rank takes the local address on its
// route to rank 0, whose candidate addresses travel over the run's control channel.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace cb::gloo_backend {

// This host's IPv4 addresses outside 127.0.0.0/8, the one `preferred` names first (the address
// the host name resolves to, where it is one of them), the rest in interface order.
std::vector<std::string> candidate_addresses(const std::string& preferred);

// The local IPv4 address the kernel would send from to reach `peer` (no packet is sent), or
// empty when there is no route.
std::string route_source(const std::string& peer);

// "10.0.0.1,10.0.0.2" <-> {"10.0.0.1", "10.0.0.2"}
std::string join_addresses(const std::vector<std::string>& addrs);
std::vector<std::string> split_addresses(const std::string& text);

// Index of the first of rank 0's addresses this rank can reach from a non-loopback address of
// its own (any address, when it shares rank 0's host), or -1. `route` is route_source.
int reachable_index(const std::vector<std::string>& rank0_addrs, bool same_host_as_rank0,
                    const std::function<std::string(const std::string&)>& route);

// The address every rank agrees on: the index chosen by most ranks (ties: the lowest), ignoring
// ranks that reach none (-1). -1 when no rank reaches any.
int agreed_index(const std::vector<int>& votes);

}  // namespace cb::gloo_backend
