// What the acceptance check reads from a topology document, typed: read once from a
// commbench/topology/v1 or commbench/cluster-topology/v1 document, so the rules never look up
// JSON keys by string.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace cb {

struct PcieLinkFacts {
  std::optional<double> current_gts, max_gts, current_width;
};

// A GPU or an RDMA NIC: the devices whose PCIe links carry collective traffic.
struct LinkDeviceFacts {
  std::string label;  // "GPU 0 (0000:18:00.0)" or "mlx5_0 (0000:19:00.0)"
  bool gpu = false;
  std::optional<PcieLinkFacts> link;    // the device's own link
  std::optional<PcieLinkFacts> parent;  // the upstream port's link
};

struct GpuFacts {
  std::string label;  // "GPU 0 (0000:18:00.0)"
  std::optional<double> nvlinks_up, nvlinks_total;
};

struct IbPortFacts {
  std::string label;  // "mlx5_0 port 1"
  std::string state;  // "ACTIVE" ("4: ACTIVE" in sysfs, the number dropped)
  std::optional<double> rate_gbps;
};

struct HostTopologyFacts {
  std::size_t numa_nodes = 0;
  std::vector<GpuFacts> gpus;
  std::vector<LinkDeviceFacts> link_devices;  // GPUs first, then RDMA NICs
  std::vector<IbPortFacts> ib_ports;
  bool gdr_present = false;
  std::string gdr_module;
  std::vector<std::string> warnings;
};

struct TopologyFacts {
  bool cluster = false;    // a cluster-topology document: `hosts` holds every host
  HostTopologyFacts host;  // the one host of a topology document
  struct Host {
    std::string name;
    HostTopologyFacts facts;
  };
  std::vector<Host> hosts;
  std::vector<std::string> odd_hosts;    // hosts outside the largest fingerprint group
  std::vector<std::string> differences;  // "node2: gpus = 7 (majority 8)"
};

// Throws a usage Error naming `source` unless `doc` is a commbench/topology/v1 or
// commbench/cluster-topology/v1 object.
void validate_topology(const nlohmann::json& doc, const std::string& source);

// The facts of a document validate_topology accepts.
TopologyFacts topology_facts(const nlohmann::json& doc);

}  // namespace cb
