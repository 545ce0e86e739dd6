#include "probes/links_hcas.hpp"

#include <algorithm>

#include "probes/net.hpp"

namespace cb {

std::vector<std::string> active_hcas(Sysfs& sys) {
  std::vector<std::string> out;
  for (const auto& nic : scan_rdma(sys)) {
    if (std::any_of(nic.ports.begin(), nic.ports.end(),
                    [](const IbPort& p) { return p.state == "ACTIVE"; }))
      out.push_back(nic.name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace cb
