// `commbench topo`'s tables, in the order an acceptance engineer reads them.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <ostream>
#include <set>

#include "common/text_table.hpp"
#include "probes/cpulist.hpp"
#include "probes/topology.hpp"

namespace cb {

namespace {

using Align = TextTable::Align;

std::string or_dash(const std::optional<std::string>& s) {
  return s && !s->empty() ? *s : "-";
}
std::string or_dash(const std::optional<int>& v) {
  return v ? std::to_string(*v) : "-";
}

std::string link_text(std::optional<double> gts, std::optional<int> width) {
  if (!gts && !width) return "-";
  return fmt::format("{} x{}", gts ? fmt::format("{:g} GT/s", *gts) : "?",
                     width ? std::to_string(*width) : "?");
}

std::string link_status(const PciLink& l) {
  if (l.degraded) return "DEGRADED";
  if (l.empty_port) return "empty port";
  if (l.power_saving) return "power saving";
  return "ok";
}

void print_numa(const Topology& topo, std::ostream& out) {
  out << "NUMA nodes\n";
  TextTable t;
  t.set_header({"node", "cpus", "memory", "distances"},
               {Align::Right, Align::Left, Align::Right, Align::Left});
  for (const auto& n : topo.numa) {
    std::string dist;
    for (int d : n.distances) {
      if (!dist.empty()) dist += ' ';
      dist += std::to_string(d);
    }
    t.add_row({std::to_string(n.id), n.cpus.empty() ? "-" : format_cpulist(n.cpus),
               n.memory_bytes
                   ? fmt::format("{:.1f} GiB", static_cast<double>(*n.memory_bytes) / (1ULL << 30))
                   : "-",
               dist.empty() ? "-" : dist});
  }
  t.print(out, "  ");
}

void print_pci(const Topology& topo, std::ostream& out) {
  out << "\nPCI tree (devices that matter and the bridges above them; link: current and max)\n";
  if (topo.pci_listed.empty()) {
    out << "  none\n";
    return;
  }
  TextTable t;
  t.set_header({"device", "kind", "vendor:device", "class", "numa", "local cpus", "link now",
                "link max", "status", "iommu", "acs"},
               {Align::Left, Align::Left, Align::Left, Align::Left, Align::Right, Align::Left,
                Align::Left, Align::Left, Align::Left, Align::Right, Align::Left});
  std::string last_root = "\x01";
  for (const auto& bdf : topo.pci_listed) {
    const PciDevice& d = *find_device(topo.pci, bdf);
    if (d.host_bridge != last_root) {
      last_root = d.host_bridge;
      t.add_row({d.host_bridge.empty() ? "(no host bridge)" : d.host_bridge + " (host bridge)"});
    }
    std::string acs = "-";
    if (d.acs) {
      acs = d.acs->status == "read" ? (d.acs->p2p_redirect ? "P2P redirect" : "no redirect")
                                    : d.acs->status;
    }
    t.add_row({std::string(2 * (d.ancestors.size() + 1), ' ') + d.bdf, d.kind,
               fmt::format("{:04x}:{:04x}", d.vendor, d.device),
               fmt::format("0x{:06x}", d.class_code), or_dash(d.numa_node), or_dash(d.local_cpus),
               d.link ? link_text(d.link->current_gts, d.link->current_width) : "-",
               d.link ? link_text(d.link->max_gts, d.link->max_width) : "-",
               d.link ? link_status(*d.link) : "no link files", or_dash(d.iommu_group), acs});
  }
  t.print(out, "  ");
}

void print_gpus(const Topology& topo, std::ostream& out) {
  out << "\nGPUs (" << topo.nvml_status << ")\n";
  if (topo.gpus.empty()) {
    out << "  none\n";
    return;
  }
  TextTable t;
  t.set_header({"gpu", "bdf", "name", "numa", "nvlinks up", "uuid"},
               {Align::Left, Align::Left, Align::Left, Align::Right, Align::Right, Align::Left});
  for (const auto& g : topo.gpus) {
    const PciDevice* d = find_device(topo.pci, g.bdf);
    std::string name = g.name ? *g.name
                       : d    ? fmt::format("(PCI {:04x}:{:04x})", d->vendor, d->device)
                              : "-";
    std::string links =
        g.nvlinks_up ? fmt::format("{}/{}", *g.nvlinks_up, g.nvlinks_total.value_or(0)) : "-";
    t.add_row(
        {fmt::format("GPU{}", g.index), g.bdf, name, or_dash(g.numa_node), links, or_dash(g.uuid)});
  }
  t.print(out, "  ");

  out << "\nGPU matrix\n";
  TextTable m;
  std::vector<std::string> header{""};
  for (const auto& g : topo.gpus) header.push_back(fmt::format("GPU{}", g.index));
  for (std::size_t i = 0; i < topo.nics.size(); ++i) header.push_back(fmt::format("NIC{}", i));
  header.insert(header.end(), {"CPU Affinity", "NUMA Affinity", "GPU NUMA ID"});
  std::vector<Align> align(header.size(), Align::Right);
  align[0] = Align::Left;
  align[align.size() - 3] = Align::Left;
  m.set_header(header, align);
  int nodes = static_cast<int>(topo.numa.size());
  for (std::size_t i = 0; i < topo.gpus.size(); ++i) {
    const auto& g = topo.gpus[i];
    std::vector<std::string> row{fmt::format("GPU{}", g.index)};
    row.insert(row.end(), topo.gpu_matrix[i].begin(), topo.gpu_matrix[i].end());
    row.insert(row.end(), topo.gpu_nic_matrix[i].begin(), topo.gpu_nic_matrix[i].end());
    row.push_back(or_dash(g.cpu_affinity));
    row.push_back(g.numa_node ? std::to_string(*g.numa_node) : "N/A");
    row.push_back(g.gpu_numa_id ? std::to_string(*g.gpu_numa_id) : "N/A");
    m.add_row(row);
  }
  for (std::size_t n = 0; n < topo.nics.size(); ++n) {
    std::vector<std::string> row{fmt::format("NIC{}", n)};
    for (std::size_t i = 0; i < topo.gpus.size(); ++i) row.push_back(topo.gpu_nic_matrix[i][n]);
    const PciDevice* a = topo.nics[n].bdf ? find_device(topo.pci, *topo.nics[n].bdf) : nullptr;
    for (std::size_t k = 0; k < topo.nics.size(); ++k) {
      const PciDevice* b = topo.nics[k].bdf ? find_device(topo.pci, *topo.nics[k].bdf) : nullptr;
      row.push_back(k == n ? "X" : a && b ? pci_path_level(*a, *b, nodes) : "N/A");
    }
    m.add_row(row);
  }
  m.print(out, "  ");
  out << "  Legend: X = self; NV# = a bonded set of # NVLinks; PIX = at most one PCIe switch;\n"
         "          PXB = several PCIe switches, no host bridge; PHB = through a PCIe host bridge "
         "(CPU);\n"
         "          NODE = between host bridges within one NUMA node; SYS = across NUMA nodes "
         "(inter-socket link)\n";
  for (std::size_t n = 0; n < topo.nics.size(); ++n) {
    out << fmt::format("  NIC{}: {}\n", n, topo.nics[n].name);
  }
}

void print_network(const Topology& topo, std::ostream& out) {
  out << "\nRDMA NIC ports (InfiniBand / RoCE)\n";
  if (topo.nics.empty()) {
    out << "  none (no /sys/class/infiniband)\n";
  } else {
    TextTable t;
    t.set_header(
        {"nic", "bdf", "numa", "port", "state", "physical", "rate", "link layer", "netdevs"},
        {Align::Left, Align::Left, Align::Right, Align::Right, Align::Left, Align::Left,
         Align::Left, Align::Left, Align::Left});
    for (const auto& n : topo.nics) {
      const PciDevice* d = n.bdf ? find_device(topo.pci, *n.bdf) : nullptr;
      std::string netdevs;
      for (const auto& nd : n.netdevs) {
        if (!netdevs.empty()) netdevs += ',';
        netdevs += nd;
      }
      if (n.ports.empty())
        t.add_row({n.name, or_dash(n.bdf), d ? or_dash(d->numa_node) : "-", "-"});
      for (const auto& p : n.ports) {
        t.add_row({n.name, or_dash(n.bdf), d ? or_dash(d->numa_node) : "-", std::to_string(p.port),
                   p.state, or_dash(p.phys_state), or_dash(p.rate), p.link_layer,
                   netdevs.empty() ? "-" : netdevs});
      }
    }
    t.print(out, "  ");
  }
  out << "\nNetwork interfaces\n";
  if (topo.netdevs.empty()) {
    out << "  none\n";
  } else {
    TextTable t;
    t.set_header({"netdev", "bdf", "state", "speed", "rdma device"},
                 {Align::Left, Align::Left, Align::Left, Align::Right, Align::Left});
    for (const auto& n : topo.netdevs) {
      t.add_row({n.name, or_dash(n.bdf), or_dash(n.operstate),
                 n.speed_mbps ? fmt::format("{:g} Gb/s", static_cast<double>(*n.speed_mbps) / 1000)
                              : "unknown",
                 or_dash(n.rdma_device)});
    }
    t.print(out, "  ");
  }
}

void print_platform(const Topology& topo, std::ostream& out) {
  out << "\nNVIDIA driver: " << topo.nvidia_driver.value_or("no nvidia module loaded") << "\n";
  out << "\nGPUDirect RDMA: "
      << (topo.gdr.present ? *topo.gdr.module + " loaded"
                           : std::string("no peer-memory module loaded"))
      << "\n";
  std::set<std::string> listed(topo.pci_listed.begin(), topo.pci_listed.end());
  out << "\nIOMMU groups: ";
  if (topo.iommu.empty()) {
    out << "none (IOMMU off or not exposed)\n";
  } else {
    std::map<std::string, int> types;
    for (const auto& g : topo.iommu) ++types[g.type.value_or("unknown type")];
    std::string kinds;
    for (const auto& [type, n] : types) {
      if (!kinds.empty()) kinds += ", ";
      kinds += fmt::format("{} {}", n, type);
    }
    out << fmt::format("{} ({})\n", topo.iommu.size(), kinds);
    // Devices sharing a group cannot be assigned apart and hint at missing ACS isolation.
    TextTable t;
    t.set_header({"group", "type", "devices sharing it"}, {Align::Right, Align::Left, Align::Left});
    for (const auto& g : topo.iommu) {
      if (g.devices.size() < 2 ||
          std::none_of(g.devices.begin(), g.devices.end(),
                       [&](const std::string& d) { return listed.count(d); })) {
        continue;
      }
      std::string devs;
      for (const auto& d : g.devices) {
        if (!devs.empty()) devs += ' ';
        devs += d;
      }
      t.add_row({std::to_string(g.id), g.type.value_or("-"), devs});
    }
    if (t.empty()) {
      out << "  every listed device has a group of its own\n";
    } else {
      t.print(out, "  ");
    }
  }
  int bridges = 0, unread = 0;
  for (const auto& bdf : topo.pci_listed) {
    const PciDevice& d = *find_device(topo.pci, bdf);
    if (!d.acs) continue;
    ++bridges;
    unread += d.acs->status == "needs root" ? 1 : 0;
  }
  if (bridges > 0) {
    out << "ACS: "
        << (unread ? fmt::format("{} of {} bridges unknown (needs root)", unread, bridges)
                   : fmt::format("read on {} bridges (see the acs column)", bridges))
        << "\n";
  }
  out << "\nWarnings";
  if (topo.warnings.empty()) {
    out << ": none\n";
  } else {
    out << fmt::format(" ({})\n", topo.warnings.size());
    for (const auto& w : topo.warnings) out << "  - " << w << "\n";
  }
}

}  // namespace

void print_topology(const Topology& topo, std::ostream& out) {
  out << "Host: " << topo.host.value_or("unknown") << "\n\n";
  print_numa(topo, out);
  print_pci(topo, out);
  print_gpus(topo, out);
  print_network(topo, out);
  print_platform(topo, out);
}

}  // namespace cb
