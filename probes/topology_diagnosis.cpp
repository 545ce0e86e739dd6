// Diagnosis: what in a probed topology limits collective bandwidth, as warnings.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "common/error.hpp"
#include "probes/topology_internal.hpp"

namespace cb {

namespace {

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

}  // namespace

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

}  // namespace cb
