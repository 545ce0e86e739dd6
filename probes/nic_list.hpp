// `--nics a,b`: the NICs to measure one at a time, checked before anything runs.
#pragma once

#include <string>
#include <vector>

namespace cb {

// The names in `text` (comma-separated), in order. A usage error names the first empty name
// ("eth0,"), repeated name (each would be measured twice and counted as two rails) or loopback
// interface ("lo", or one this host flags as loopback: it carries no traffic between hosts).
std::vector<std::string> parse_nic_list(const std::string& text);

}  // namespace cb
