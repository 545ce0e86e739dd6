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

// Loads the facts a snapshot carries (host, NVML). Absent file: unknown host, no NVML.
void read_snapshot_facts(Sysfs& sys, Topology& topo) {
  auto text = sys.read(kSnapshotFile);
  if (!text) {
    topo.nvml_status = "not in snapshot";
    return;
  }
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    usage_error("{}/{} is not valid JSON", sys.root(), kSnapshotFile);
  }
  if (j.contains("host") && j["host"].is_string()) topo.host = j["host"].get<std::string>();
  if (j.contains("nvml") && j["nvml"].is_object()) topo.nvml = nvml_facts_from_json(j["nvml"]);
  topo.nvml_status = j.value("nvml_status", topo.nvml ? "from snapshot" : "not in snapshot");
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

std::string describe_link(const PciLink& l) {
  auto speed = [](std::optional<double> v) {
    return v ? fmt::format("{:g} GT/s", *v) : std::string("? GT/s");
  };
  auto width = [](std::optional<int> v) { return v ? fmt::format("x{}", *v) : std::string("x?"); };
  return fmt::format("running {} at {}, capable of {} at {}", width(l.current_width),
                     speed(l.current_gts), width(l.max_width), speed(l.max_gts));
}

int gpus_below(const std::vector<PciDevice>& pci, const std::string& bridge) {
  return static_cast<int>(std::count_if(pci.begin(), pci.end(), [&](const PciDevice& d) {
    return d.kind == "gpu" &&
           std::find(d.ancestors.begin(), d.ancestors.end(), bridge) != d.ancestors.end();
  }));
}

void collect_warnings(Topology& topo) {
  for (const auto& bdf : topo.pci_listed) {
    const PciDevice& d = *find_device(topo.pci, bdf);
    if (d.link) {
      const PciLink& l = *d.link;
      bool own = d.role == LinkRole::Up || d.children.empty() ||
                 std::none_of(d.children.begin(), d.children.end(), [&](const std::string& c) {
                   const PciDevice* cd = find_device(topo.pci, c);
                   return cd && cd->link;
                 });
      if (l.degraded && own) {
        topo.warnings.push_back(fmt::format("{} ({}): PCIe link degraded: {} ({})", d.bdf, d.kind,
                                            l.reason, describe_link(l)));
      }
      if (l.capped_by_gts && d.parent()) {
        topo.warnings.push_back(fmt::format(
            "{} ({}): capable of {:g} GT/s but its upstream port {} tops out at {:g} GT/s", d.bdf,
            d.kind, *l.max_gts, *d.parent(), *l.capped_by_gts));
      }
    }
    // Redirect matters on a switch port whose GPU has a peer below the same switch; on a root
    // port, traffic between ports goes through the root complex anyway.
    if (d.acs && d.acs->p2p_redirect && d.parent() && gpus_below(topo.pci, d.bdf) > 0 &&
        gpus_below(topo.pci, *d.parent()) > 1) {
      topo.warnings.push_back(
          fmt::format("{} (bridge): ACS P2P redirect is on (control 0x{:04x}): GPU peer traffic "
                      "below it is sent up to the root complex",
                      d.bdf, d.acs->control.value_or(0)));
    }
  }
  for (const auto& g : topo.gpus) {
    if (!g.from_nvml || !g.nvlinks_total || *g.nvlinks_total == 0) continue;
    std::vector<int> down;
    for (const auto& n : topo.nvml->gpus) {
      if (n.bdf != g.bdf) continue;
      for (const auto& l : n.nvlinks) {
        if (!l.active) down.push_back(l.link);
      }
    }
    if (!down.empty()) {
      std::string list;
      for (int l : down) {
        if (!list.empty()) list += ", ";
        list += std::to_string(l);
      }
      topo.warnings.push_back(fmt::format("GPU{} {}: {} of {} NVLinks down (link{} {})", g.index,
                                          g.bdf, down.size(), *g.nvlinks_total,
                                          down.size() == 1 ? "" : "s", list));
    }
  }
  // RDMA ports: anything but ACTIVE is a problem; so is an active port slower than its peers.
  std::map<std::string, double> best_rate;
  for (const auto& nic : topo.nics) {
    for (const auto& p : nic.ports) {
      if (p.state == "ACTIVE" && p.rate_gbps)
        best_rate[p.link_layer] = std::max(best_rate[p.link_layer], *p.rate_gbps);
    }
  }
  for (const auto& nic : topo.nics) {
    for (const auto& p : nic.ports) {
      if (p.state != "ACTIVE") {
        topo.warnings.push_back(
            fmt::format("{} port {}: state {}{} ({})", nic.name, p.port, p.state,
                        p.phys_state ? ", physical state " + *p.phys_state : "", p.link_layer));
      } else if (p.rate_gbps && *p.rate_gbps < best_rate[p.link_layer]) {
        topo.warnings.push_back(
            fmt::format("{} port {}: {:g} Gb/s, below the {:g} Gb/s of other {} ports", nic.name,
                        p.port, *p.rate_gbps, best_rate[p.link_layer], p.link_layer));
      }
    }
  }
  bool nvidia_gpu = std::any_of(topo.pci.begin(), topo.pci.end(), [](const PciDevice& d) {
    return d.kind == "gpu" && d.vendor == 0x10de;
  });
  if (nvidia_gpu && !topo.nvml) {
    topo.warnings.push_back("NVML unavailable (" + topo.nvml_status +
                            "): GPU names and NVLink state unknown");
  }
  if (nvidia_gpu && !topo.nics.empty() && !topo.gdr.present) {
    topo.warnings.push_back(
        "GPUDirect RDMA: no peer-memory module (nvidia_peermem) loaded; NIC traffic to GPU memory "
        "is staged through host "
        "memory unless DMA-BUF is available");
  }
}

nlohmann::json opt_json(const auto& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
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
  topo.iommu = read_iommu(sys);
  build_gpus(topo);
  build_matrices(topo);
  collect_warnings(topo);
  return topo;
}

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
          {"warnings", topo.warnings}};
}

void capture_snapshot(const Sysfs& sys, const Topology& topo, const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0)
    usage_error("--capture '{}' already exists: name a new directory", dir);
  std::string temp = dir + ".partial." + std::to_string(::getpid());
  try {
    sys.capture(temp);
    nlohmann::json facts = {
        {"schema", kSnapshotSchema},
        {"host", opt_json(topo.host)},
        {"nvml", topo.nvml ? nvml_facts_to_json(*topo.nvml) : nlohmann::json(nullptr)},
        {"nvml_status", topo.nvml_status}};
    std::ofstream out(temp + "/" + kSnapshotFile);
    out << facts.dump(2) << "\n";
    out.close();
    if (!out) runtime_error("cannot write '{}/{}'", temp, kSnapshotFile);
    if (std::rename(temp.c_str(), dir.c_str()) != 0)
      runtime_error("cannot create '{}': {}", dir, std::strerror(errno));
  } catch (...) {
    // Remove the partial tree (only what was created under the temporary name).
    std::function<void(const std::string&)> remove_tree = [&](const std::string& path) {
      struct stat s {};
      if (::lstat(path.c_str(), &s) != 0) return;
      if (S_ISDIR(s.st_mode)) {
        Sysfs tree(path);
        for (const auto& e : tree.list("")) remove_tree(path + "/" + e);
        ::rmdir(path.c_str());
      } else {
        ::unlink(path.c_str());
      }
    };
    remove_tree(temp);
    throw;
  }
}

nlohmann::json probe_topology_json(const std::string& sysfs_root) {
  Sysfs sys(sysfs_root);
  return topology_to_json(probe_topology(sys));
}

}  // namespace cb
