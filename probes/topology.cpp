#include "probes/topology.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <set>

#include "common/error.hpp"
#include "common/host_name.hpp"
#include "common/schema.hpp"
#include "probes/cpulist.hpp"
#include "probes/topology_internal.hpp"

namespace cb {

namespace {

std::optional<int> to_int(std::string_view s) {
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::vector<NumaNode> read_numa(Sysfs& sys) {
  std::vector<NumaNode> nodes;
  for (const auto& name : sys.list("devices/system/node")) {
    if (name.rfind("node", 0) != 0) continue;
    auto id = to_int(std::string_view(name).substr(4));
    if (!id) continue;
    std::string dir = "devices/system/node/" + name;
    NumaNode n;
    n.id = *id;
    if (auto list = sys.read(dir + "/cpulist"))
      n.cpus = parse_cpulist(*list).value_or(std::vector<int>{});
    if (auto dist = sys.read(dir + "/distance")) {
      std::size_t at = 0;
      while (at < dist->size()) {
        auto end = dist->find(' ', at);
        if (end == std::string::npos) end = dist->size();
        if (auto v = to_int(std::string_view(*dist).substr(at, end - at)))
          n.distances.push_back(*v);
        at = end + 1;
      }
    }
    if (auto info = sys.read(dir + "/meminfo")) {
      auto pos = info->find("MemTotal:");
      if (pos != std::string::npos) {
        std::uint64_t kb = 0;
        const char* p = info->data() + pos + 9;
        while (*p == ' ') ++p;
        auto [end, ec] = std::from_chars(p, info->data() + info->size(), kb);
        if (ec == std::errc()) n.memory_bytes = kb * 1024;
      }
    }
    nodes.push_back(std::move(n));
  }
  std::sort(nodes.begin(), nodes.end(),
            [](const NumaNode& a, const NumaNode& b) { return a.id < b.id; });
  if (nodes.empty()) {
    // A kernel without NUMA support: one node holding every online CPU.
    NumaNode n;
    if (auto list = sys.read("devices/system/cpu/online"))
      n.cpus = parse_cpulist(*list).value_or(std::vector<int>{});
    n.distances = {10};
    nodes.push_back(n);
  }
  return nodes;
}

std::vector<IommuGroup> read_iommu(Sysfs& sys) {
  std::vector<IommuGroup> groups;
  for (const auto& name : sys.list("kernel/iommu_groups")) {
    auto id = to_int(name);
    if (!id) continue;
    IommuGroup g;
    g.id = *id;
    g.type = sys.read("kernel/iommu_groups/" + name + "/type");
    g.devices = sys.list("kernel/iommu_groups/" + name + "/devices");
    groups.push_back(std::move(g));
  }
  std::sort(groups.begin(), groups.end(),
            [](const IommuGroup& a, const IommuGroup& b) { return a.id < b.id; });
  return groups;
}

// Devices that matter and the bridges above them, in depth-first tree order.
std::vector<std::string> listed_devices(const std::vector<PciDevice>& pci) {
  std::set<std::string> keep;
  for (const auto& d : pci) {
    if (d.kind == "gpu" || d.kind == "nic" || d.kind == "nvswitch" || d.kind == "storage") {
      keep.insert(d.bdf);
      for (const auto& a : d.ancestors) keep.insert(a);
    }
  }
  // Sort by host bridge, then by the chain of addresses from the root: parents before children.
  std::vector<const PciDevice*> order;
  for (const auto& d : pci) {
    if (keep.count(d.bdf)) order.push_back(&d);
  }
  auto key = [](const PciDevice* d) {
    std::vector<std::string> k{d->host_bridge};
    k.insert(k.end(), d->ancestors.begin(), d->ancestors.end());
    k.push_back(d->bdf);
    return k;
  };
  std::sort(order.begin(), order.end(),
            [&](const PciDevice* a, const PciDevice* b) { return key(a) < key(b); });
  std::vector<std::string> out;
  for (const auto* d : order) out.push_back(d->bdf);
  return out;
}

void build_gpus(Topology& topo) {
  std::vector<const PciDevice*> pci_gpus;
  for (const auto& d : topo.pci) {
    if (d.kind == "gpu") pci_gpus.push_back(&d);
  }
  std::set<std::string> seen;
  if (topo.nvml) {
    for (const auto& g : topo.nvml->gpus) {
      GpuInfo info;
      info.index = g.index;
      info.bdf = g.bdf;
      info.name = g.name;
      if (!g.uuid.empty()) info.uuid = g.uuid;
      info.gpu_numa_id = g.numa_node_id;
      info.from_nvml = true;
      int up = 0;
      for (const auto& l : g.nvlinks) {
        up += l.active ? 1 : 0;
        const PciDevice* remote = l.remote_bdf ? find_device(topo.pci, *l.remote_bdf) : nullptr;
        // A remote that is an NVSwitch, or an empty remote id (VMs hide switches), means the
        // GPU reaches every peer through NVSwitches.
        if (l.active &&
            (l.remote_is_switch || !l.remote_bdf || (remote && remote->kind == "nvswitch"))) {
          info.nvswitch = true;
        }
      }
      info.nvlinks_up = up;
      info.nvlinks_total = static_cast<int>(g.nvlinks.size());
      const PciDevice* dev = find_device(topo.pci, g.bdf);
      if (dev) {
        info.numa_node = dev->numa_node;
        info.cpu_affinity = dev->local_cpus;
      }
      if (!info.cpu_affinity) info.cpu_affinity = g.cpu_affinity;
      seen.insert(g.bdf);
      topo.gpus.push_back(std::move(info));
    }
  }
  int next = topo.gpus.empty() ? 0 : topo.gpus.back().index + 1;
  for (const auto* d : pci_gpus) {
    if (seen.count(d->bdf)) continue;
    GpuInfo info;
    info.index = next++;
    info.bdf = d->bdf;
    info.numa_node = d->numa_node;
    info.cpu_affinity = d->local_cpus;
    if (topo.nvml && d->vendor == 0x10de) {
      topo.warnings.push_back(fmt::format(
          "GPU {}: on the PCI bus but not seen by NVML (driver not bound, or the GPU fell off)",
          d->bdf));
    }
    topo.gpus.push_back(std::move(info));
  }
}

int nvlink_count(const Topology& topo, const GpuInfo& a, const GpuInfo& b) {
  if (!topo.nvml) return 0;
  if (a.nvswitch && b.nvswitch) return std::min(a.nvlinks_up.value_or(0), b.nvlinks_up.value_or(0));
  int n = 0;
  for (const auto& g : topo.nvml->gpus) {
    if (g.bdf != a.bdf) continue;
    for (const auto& l : g.nvlinks) n += l.active && l.remote_bdf == b.bdf ? 1 : 0;
  }
  return n;
}

void build_matrices(Topology& topo) {
  int nodes = static_cast<int>(topo.numa.size());
  for (const auto& a : topo.gpus) {
    std::vector<std::string> row;
    const PciDevice* da = find_device(topo.pci, a.bdf);
    for (const auto& b : topo.gpus) {
      if (a.bdf == b.bdf) {
        row.push_back("X");
      } else if (int nv = nvlink_count(topo, a, b); nv > 0) {
        row.push_back(fmt::format("NV{}", nv));
      } else {
        const PciDevice* db = find_device(topo.pci, b.bdf);
        row.push_back(da && db ? pci_path_level(*da, *db, nodes) : "N/A");
      }
    }
    topo.gpu_matrix.push_back(std::move(row));
    std::vector<std::string> nic_row;
    for (const auto& nic : topo.nics) {
      const PciDevice* dn = nic.bdf ? find_device(topo.pci, *nic.bdf) : nullptr;
      nic_row.push_back(da && dn ? pci_path_level(*da, *dn, nodes) : "N/A");
    }
    topo.gpu_nic_matrix.push_back(std::move(nic_row));
  }
}

}  // namespace

bool is_live_sysfs(const std::string& root) {
  std::string r = root;
  while (r.size() > 1 && r.back() == '/') r.pop_back();
  return r == "/sys";
}

std::string pci_path_level(const PciDevice& a, const PciDevice& b, int numa_nodes) {
  if (a.bdf == b.bdf) return "X";
  std::size_t k = 0;
  while (k < a.ancestors.size() && k < b.ancestors.size() && a.ancestors[k] == b.ancestors[k]) ++k;
  if (k > 0 && a.host_bridge == b.host_bridge) {
    // Bridges crossed: those below the common one on each side, plus the common one. One
    // switch (upstream port and its downstream ports) is at most three.
    std::size_t bridges = (a.ancestors.size() - k) + (b.ancestors.size() - k) + 1;
    return bridges <= 3 ? "PIX" : "PXB";
  }
  if (!a.host_bridge.empty() && a.host_bridge == b.host_bridge) return "PHB";
  if (a.numa_node && b.numa_node) return *a.numa_node == *b.numa_node ? "NODE" : "SYS";
  return numa_nodes <= 1 ? "NODE" : "SYS";
}

Topology probe_topology(Sysfs& sys, const TopologyOptions& options) {
  Topology topo;
  if (is_live_sysfs(sys.root())) {
    topo.host = host_name();
    if (options.use_nvml) {
      std::string why;
      topo.nvml = query_nvml(why);
      topo.nvml_status = topo.nvml ? fmt::format("NVML driver {}: {} GPUs",
                                                 topo.nvml->driver_version, topo.nvml->gpus.size())
                                   : why;
    } else {
      topo.nvml_status = "not queried";
    }
  } else {
    read_snapshot_facts(sys, topo);
  }
  topo.numa = read_numa(sys);
  topo.pci = scan_pci(sys);
  topo.pci_listed = listed_devices(topo.pci);
  topo.nics = scan_rdma(sys);
  topo.netdevs = scan_netdevs(sys, topo.nics);
  topo.gdr = probe_gdr(sys);
  topo.nvidia_driver = sys.read("module/nvidia/version");
  topo.iommu = read_iommu(sys);
  build_gpus(topo);
  build_matrices(topo);
  collect_warnings(topo);
  return topo;
}

nlohmann::json probe_topology_json(const std::string& sysfs_root) {
  Sysfs sys(sysfs_root);
  return topology_to_json(probe_topology(sys));
}

}  // namespace cb
