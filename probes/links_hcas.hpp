// The HCAs `probe links --transport nccl` measures one at a time: RDMA devices (InfiniBand or
// RoCE) in /sys/class/infiniband with at least one ACTIVE port, the ones NCCL's IB transport
// takes (it skips ports that are not active).
#pragma once

#include <string>
#include <vector>

#include "probes/sysfs.hpp"

namespace cb {

// Sorted by name.
std::vector<std::string> active_hcas(Sysfs& sys);

}  // namespace cb
