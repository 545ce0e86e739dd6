// Network devices as sysfs shows them: RDMA devices (InfiniBand and RoCE HCAs) with their
// ports, kernel netdevs with their speeds, and whether GPUDirect RDMA's kernel module is loaded.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "probes/sysfs.hpp"

namespace cb {

struct IbPort {
  int port = 0;
  std::string state;                      // "ACTIVE", "DOWN", ...
  std::optional<std::string> phys_state;  // "LinkUp", "Disabled", ...
  std::optional<double> rate_gbps;        // 400 for "400 Gb/sec (4X NDR)"
  std::optional<std::string> rate;        // the kernel's text
  std::string link_layer;                 // "InfiniBand" or "Ethernet" (RoCE)
};

struct RdmaNic {
  std::string name;                // "mlx5_0"
  std::optional<std::string> bdf;  // the PCI function behind it
  std::vector<IbPort> ports;
  std::vector<std::string> netdevs;  // "ib0", "enp24s0np0"
};

struct NetDev {
  std::string name;
  std::optional<std::string> bdf;          // nearest PCI device (virtio netdevs sit below one)
  std::optional<long> speed_mbps;          // null when unknown: -1, or the read fails (link down)
  std::optional<std::string> operstate;    // "up", "down", ...
  std::optional<std::string> rdma_device;  // when an RDMA device shares the PCI function
};

struct GdrInfo {
  std::optional<std::string> module;  // "nvidia_peermem" or "nv_peer_mem"
  bool present = false;
};

// The last PCI address in a canonical sysfs path.
std::optional<std::string> last_bdf_in_path(const std::string& path);
// "4: ACTIVE" -> "ACTIVE"
std::string after_colon(const std::string& text);
// "400 Gb/sec (4X NDR)" -> 400
std::optional<double> parse_ib_rate(const std::string& text);

std::vector<RdmaNic> scan_rdma(Sysfs& sys);
// Netdevs backed by hardware (those under devices/virtual are left out).
std::vector<NetDev> scan_netdevs(Sysfs& sys, const std::vector<RdmaNic>& rdma);
// Where NCCL looks for a peer-memory module.
GdrInfo probe_gdr(Sysfs& sys);

}  // namespace cb
