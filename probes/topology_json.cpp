// The commbench/topology/v1 document of a probed topology.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "common/schema.hpp"
#include "probes/topology_internal.hpp"

namespace cb {

nlohmann::json topology_to_json(const Topology& topo) {
  using json = nlohmann::json;
  json numa = json::array();
  for (const auto& n : topo.numa) {
    numa.push_back({{"id", n.id},
                    {"cpus", n.cpus},
                    {"memory_bytes", opt_json(n.memory_bytes)},
                    {"distances", n.distances}});
  }
  json pci = json::array();
  for (const auto& bdf : topo.pci_listed) {
    const PciDevice& d = *find_device(topo.pci, bdf);
    json link = nullptr;
    if (d.link) {
      const PciLink& l = *d.link;
      link = {{"current_gts", opt_json(l.current_gts)},
              {"max_gts", opt_json(l.max_gts)},
              {"current_width", opt_json(l.current_width)},
              {"max_width", opt_json(l.max_width)},
              {"degraded", l.degraded},
              {"power_saving", l.power_saving},
              {"empty_port", l.empty_port}};
      if (l.degraded) link["reason"] = l.reason;
    }
    json acs = nullptr;
    if (d.acs) {
      acs = {{"status", d.acs->status},
             {"control",
              d.acs->control ? json(fmt::format("0x{:04x}", *d.acs->control)) : json(nullptr)},
             {"p2p_redirect", d.acs->control ? json(d.acs->p2p_redirect) : json(nullptr)}};
    }
    pci.push_back({{"bdf", d.bdf},
                   {"kind", d.kind},
                   {"class", fmt::format("0x{:06x}", d.class_code)},
                   {"vendor", fmt::format("0x{:04x}", d.vendor)},
                   {"device", fmt::format("0x{:04x}", d.device)},
                   {"numa_node", opt_json(d.numa_node)},
                   {"parent", opt_json(d.parent())},
                   {"link", link},
                   {"host_bridge", d.host_bridge.empty() ? json(nullptr) : json(d.host_bridge)},
                   {"local_cpus", opt_json(d.local_cpus)},
                   {"iommu_group", opt_json(d.iommu_group)},
                   {"driver", opt_json(d.driver)},
                   {"acs", acs}});
  }
  json gpus = json::array();
  for (const auto& g : topo.gpus) {
    gpus.push_back({{"index", g.index},
                    {"bdf", g.bdf},
                    {"name", opt_json(g.name)},
                    {"numa_node", opt_json(g.numa_node)},
                    {"nvlinks_up", opt_json(g.nvlinks_up)},
                    {"nvlinks_total", opt_json(g.nvlinks_total)},
                    {"nvswitch", g.from_nvml ? json(g.nvswitch) : json(nullptr)},
                    {"uuid", opt_json(g.uuid)},
                    {"cpu_affinity", opt_json(g.cpu_affinity)},
                    {"gpu_numa_id", opt_json(g.gpu_numa_id)},
                    {"source", g.from_nvml ? "nvml" : "pci"}});
  }
  json nics = json::array();
  for (const auto& n : topo.nics) {
    json ports = json::array();
    for (const auto& p : n.ports) {
      ports.push_back({{"port", p.port},
                       {"state", p.state},
                       {"rate_gbps", opt_json(p.rate_gbps)},
                       {"link_layer", p.link_layer},
                       {"phys_state", opt_json(p.phys_state)},
                       {"rate", opt_json(p.rate)}});
    }
    const PciDevice* d = n.bdf ? find_device(topo.pci, *n.bdf) : nullptr;
    nics.push_back({{"name", n.name},
                    {"bdf", opt_json(n.bdf)},
                    {"numa_node", d ? opt_json(d->numa_node) : json(nullptr)},
                    {"ports", ports},
                    {"netdevs", n.netdevs}});
  }
  json netdevs = json::array();
  for (const auto& n : topo.netdevs) {
    netdevs.push_back({{"name", n.name},
                       {"bdf", opt_json(n.bdf)},
                       {"speed_mbps", opt_json(n.speed_mbps)},
                       {"operstate", opt_json(n.operstate)},
                       {"rdma_device", opt_json(n.rdma_device)}});
  }
  json iommu = json::array();
  for (const auto& g : topo.iommu) {
    iommu.push_back({{"id", g.id}, {"type", opt_json(g.type)}, {"devices", g.devices}});
  }
  return {{"schema", kTopologySchema},
          {"host", opt_json(topo.host)},
          {"numa_nodes", numa},
          {"pci_devices", pci},
          {"gpus", gpus},
          {"gpu_matrix", topo.gpu_matrix},
          {"gpu_nic_matrix", topo.gpu_nic_matrix},
          {"nics", nics},
          {"netdevs", netdevs},
          {"gdr", {{"module", opt_json(topo.gdr.module)}, {"present", topo.gdr.present}}},
          {"iommu_groups", iommu},
          {"nvml", topo.nvml_status},
          {"nvidia_driver", opt_json(topo.nvidia_driver)},
          {"warnings", topo.warnings}};
}

}  // namespace cb
