// Topology requirements on the typed facts of one host, or of every host of a cluster: GPU and
// NUMA counts, PCIe speed and width of the links that carry collective traffic, NVLinks, IB
// ports, GPUDirect RDMA, probe warnings, identical hosts.
#include <fmt/format.h>

#include <algorithm>

#include "report/check/check_rules.hpp"

namespace cb {

namespace {

void check_pcie(const TopologyRequirement& q, const HostTopologyFacts& h, TopologyChecks& c) {
  const std::vector<LinkDeviceFacts>& devices = h.link_devices;
  const PcieLinkFacts none;
  if (q.pcie_min_gts) {
    double need = *q.pcie_min_gts;
    std::optional<double> worst;
    bool ok = !devices.empty();
    for (const auto& d : devices) {
      const PcieLinkFacts& own = d.link ? *d.link : none;
      const PcieLinkFacts& upstream = d.parent ? *d.parent : none;
      const std::optional<double>& current = own.current_gts;
      const std::optional<double>& max = own.max_gts;
      const std::optional<double>& parent_max = upstream.max_gts;
      // GPUs drop to gen 1 when idle, so an idle GPU is judged by the speed its link and the
      // port above it can train at: min(device max, upstream max).
      std::optional<double> speed = current;
      if (d.gpu && max && (!current || *current < need)) {
        speed = parent_max ? std::min(*max, *parent_max) : *max;
      }
      if (!speed) {
        ok = false;
        c.detail(fmt::format("{}: PCIe link speed unknown", d.label));
        continue;
      }
      if (*speed < need) {
        ok = false;
        c.detail(fmt::format("{}: {:g} GT/s{}", d.label, *speed,
                             d.gpu && current ? fmt::format(" (now {:g})", *current) : ""));
      }
      if (!worst || *speed < *worst) worst = *speed;
    }
    if (devices.empty()) c.detail("no GPU or RDMA NIC with a PCIe link to check");
    c.add(ok, worst ? fmt::format("slowest link {:g} GT/s", *worst) : "pcie speed unknown",
          fmt::format("pcie >= {:g} GT/s", need));
  }
  if (q.pcie_min_width) {
    int need = *q.pcie_min_width;
    std::optional<double> worst;
    bool ok = !devices.empty();
    for (const auto& d : devices) {
      const std::optional<double>& width = (d.link ? *d.link : none).current_width;
      if (!width) {
        ok = false;
        c.detail(fmt::format("{}: PCIe link width unknown", d.label));
        continue;
      }
      if (*width < need) {
        ok = false;
        c.detail(fmt::format("{}: x{:g}", d.label, *width));
      }
      if (!worst || *width < *worst) worst = *width;
    }
    if (devices.empty()) c.detail("no GPU or RDMA NIC with a PCIe link to check");
    c.add(ok, worst ? fmt::format("narrowest link x{:g}", *worst) : "pcie width unknown",
          fmt::format("pcie width >= x{}", need));
  }
}

// Every GPU has all its NVLinks up: as many as NVML says it has (nvlinks_total) where known, else
// as many as the best-connected GPU, and at least one.
void check_nvlink(const HostTopologyFacts& h, TopologyChecks& c) {
  std::optional<double> most;
  for (const auto& g : h.gpus) {
    if (g.nvlinks_up && (!most || *g.nvlinks_up > *most)) most = g.nvlinks_up;
  }
  bool ok = !h.gpus.empty() && most && *most > 0;
  std::optional<double> fewest;
  for (const auto& g : h.gpus) {
    if (!g.nvlinks_up) {
      ok = false;
      c.detail(g.label + ": NVLink state unknown");
      continue;
    }
    double expected = g.nvlinks_total.value_or(most.value_or(0));
    if (*g.nvlinks_up < expected) {
      ok = false;
      c.detail(fmt::format("{}: {:g} of {:g} NVLinks up", g.label, *g.nvlinks_up, expected));
    }
    if (!fewest || *g.nvlinks_up < *fewest) fewest = g.nvlinks_up;
  }
  if (h.gpus.empty()) c.detail("no GPUs");
  if (!h.gpus.empty() && (!most || *most == 0)) c.detail("no GPU has an NVLink up");
  c.add(ok,
        fewest ? fmt::format("NVLinks up per GPU {:g}..{:g}", *fewest, most.value_or(0))
               : std::string("no NVLink data"),
        "every GPU with all NVLinks up");
}

void check_ib(const TopologyRequirement& q, const HostTopologyFacts& h, TopologyChecks& c) {
  const std::vector<IbPortFacts>& ports = h.ib_ports;
  if (q.ib_ports) {
    c.add(static_cast<int>(ports.size()) == *q.ib_ports,
          fmt::format("{} InfiniBand port{}", ports.size(), ports.size() == 1 ? "" : "s"),
          fmt::format("ib_ports = {}", *q.ib_ports));
  }
  if (q.ib_ports_active_min_gbps) {
    double need = *q.ib_ports_active_min_gbps;
    bool ok = !ports.empty();
    std::optional<double> slowest;
    int active = 0;
    for (const auto& p : ports) {
      bool up = p.state == "ACTIVE";
      active += up;
      if (!up) {
        ok = false;
        c.detail(fmt::format("{}: state {}", p.label, p.state.empty() ? "unknown" : p.state));
      } else if (!p.rate_gbps || *p.rate_gbps < need) {
        ok = false;
        c.detail(p.rate_gbps ? fmt::format("{}: {:g} Gb/s", p.label, *p.rate_gbps)
                             : p.label + ": rate unknown");
      }
      if (p.rate_gbps && up && (!slowest || *p.rate_gbps < *slowest)) slowest = p.rate_gbps;
    }
    if (ports.empty()) c.detail("no InfiniBand ports");
    c.add(ok,
          fmt::format("{} of {} IB ports active{}", active, ports.size(),
                      slowest ? fmt::format(", slowest {:g} Gb/s", *slowest) : ""),
          fmt::format("every IB port ACTIVE at >= {:g} Gb/s", need));
  }
}

RequirementResult evaluate_host(const TopologyRequirement& q, const HostTopologyFacts& h) {
  RequirementResult out = result_for(q, "topology");
  TopologyChecks c(out);
  if (q.gpus) {
    auto n = h.gpus.size();
    c.add(static_cast<int>(n) == *q.gpus, fmt::format("{} GPU{}", n, n == 1 ? "" : "s"),
          fmt::format("gpus = {}", *q.gpus));
  }
  if (q.numa_nodes) {
    auto n = h.numa_nodes;
    c.add(static_cast<int>(n) == *q.numa_nodes, fmt::format("{} NUMA node{}", n, n == 1 ? "" : "s"),
          fmt::format("numa_nodes = {}", *q.numa_nodes));
  }
  check_pcie(q, h, c);
  if (q.nvlink_all_up) check_nvlink(h, c);
  check_ib(q, h, c);
  if (q.gdr) {
    c.add(h.gdr_present,
          h.gdr_present
              ? "GPUDirect RDMA present" + (h.gdr_module.empty() ? "" : " (" + h.gdr_module + ")")
              : std::string("no GPUDirect RDMA module"),
          "gdr present");
  }
  if (q.no_warnings) {
    for (const auto& line : h.warnings) add_detail(out, line);
    auto n = h.warnings.size();
    c.add(n == 0, fmt::format("{} probe warning{}", n, n == 1 ? "" : "s"), "no probe warnings");
  }
  c.finish();
  return out;
}

// identical_hosts: every host in one fingerprint group; details name each odd host's fields.
void check_identical(const TopologyFacts& t, TopologyChecks& c) {
  if (!t.cluster) {
    c.add(true, "1 host", "identical hosts");
    return;
  }
  for (const auto& d : t.differences) c.detail(d);
  c.add(t.odd_hosts.empty(),
        t.odd_hosts.empty() ? fmt::format("{} hosts, one topology", t.hosts.size())
                            : fmt::format("{} of {} hosts differ: {}", t.odd_hosts.size(),
                                          t.hosts.size(), joined(t.odd_hosts, ", ")),
        "identical hosts");
}

}  // namespace

RequirementResult evaluate_topology(const TopologyRequirement& q, const TopologyFacts& t) {
  RequirementResult out;
  if (!t.cluster) {
    out = evaluate_host(q, t.host);
  } else {
    std::vector<std::string> failed;
    std::string first;
    out = result_for(q, "topology");
    out.passed = true;
    for (const auto& h : t.hosts) {
      RequirementResult r = evaluate_host(q, h.facts);
      if (out.expected.empty()) {
        first = r.measured;
        out.expected = r.expected;
      }
      if (r.passed) continue;
      out.passed = false;
      failed.push_back(h.name + ": " + r.measured);
      for (const auto& d : r.details) add_detail(out, h.name + ": " + d);
    }
    if (!out.passed) {
      out.measured = joined(failed, "; ");
    } else if (!first.empty()) {
      out.measured = fmt::format("{} (each of {} hosts)", first, t.hosts.size());
    }
  }
  if (q.identical_hosts) {
    RequirementResult same;
    TopologyChecks c(same);
    check_identical(t, c);
    c.finish();
    out.passed = out.passed && same.passed;
    out.measured += (out.measured.empty() ? "" : "; ") + same.measured;
    out.expected += (out.expected.empty() ? "" : "; ") + same.expected;
    for (const auto& d : same.details) add_detail(out, d);
  }
  return out;
}

}  // namespace cb
