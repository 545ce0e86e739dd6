#include "report/roof/roof.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "collectives/backends/registry.hpp"
#include "common/median.hpp"
#include "common/units.hpp"

namespace cb {

using nlohmann::json;

std::string_view roof_kind_name(RoofKind k) {
  switch (k) {
    case RoofKind::NvLink:
      return "NVLink";
    case RoofKind::Nvls:
      return "NVLS";
    case RoofKind::Pcie:
      return "PCIe";
    case RoofKind::Network:
      return "network";
    case RoofKind::HostMemory:
      return "host memory";
    case RoofKind::Cache:
      return "cache";
    case RoofKind::Unknown:
      break;
  }
  return "unknown";
}

double host_copies_per_busbw_byte(std::string_view c) {
  if (c == "allreduce") return 1.25;  // half the busbw bytes are reduced (the reduce-scatter half)
  if (c == "reduce_scatter" || c == "reduce") return 1.5;
  return 1;
}

std::optional<double> default_min_efficiency(RoofKind k) {
  switch (k) {
    case RoofKind::NvLink:
      return 0.75;  // healthy 0.77 (A100) to 0.82 (H100 ring)
    case RoofKind::Nvls:
      return 0.5;  // healthy 0.54-0.61 of the link bound
    case RoofKind::Pcie:
      return 0.5;  // healthy 0.56-0.71 (H100 PCIe)
    case RoofKind::Network:
      return 0.75;  // healthy 0.83-0.99
    // Host memory is judged against healthy references instead (report/check/host_reference.hpp).
    case RoofKind::HostMemory:
    case RoofKind::Cache:
    case RoofKind::Unknown:
      break;
  }
  return std::nullopt;
}

RoofKind roof_kind_of_basis(std::string_view b) {
  if (b.starts_with("NVLS")) return RoofKind::Nvls;
  if (b.starts_with("NVLink")) return RoofKind::NvLink;
  if (b.starts_with("PCIe")) return RoofKind::Pcie;
  if (b.starts_with("network")) return RoofKind::Network;
  if (b.starts_with("host copy")) return RoofKind::HostMemory;
  if (b.starts_with("cache")) return RoofKind::Cache;
  return RoofKind::Unknown;
}

double host_working_set_bytes(const ResultRecord& r, int local) {
  const double b = static_cast<double>(r.bytes);
  const double n = std::max(1, r.nranks);
  const double l = std::max(1, local);
  const bool in = r.placement == "in";
  const std::string& c = r.collective;
  // Per rank: send + receive buffer (the larger one alone in place).
  if (c == "allgather" || c == "reduce_scatter") return l * (in ? b : b + b / n);
  if (c == "broadcast") return l * b;
  if (c == "reduce") return l * b + (in ? 0 : b);  // the root's receive buffer
  if (c == "gather" || c == "scatter") return b + (in ? l - 1 : l) * b / n;  // the root's b
  return l * (in ? b : 2 * b);  // allreduce, alltoall, sendrecv
}

namespace {

Roof unknown(std::string why) {
  return {RoofKind::Unknown, std::nullopt, "unknown: " + why};
}

std::optional<double> number(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

bool lower(const Roof& a, const Roof& b) {
  return a.GBps && (!b.GBps || *a.GBps < *b.GBps);
}

// The GPUs of one host that `local` ranks drive (one each, in index order), NVLink or PCIe.
Roof gpu_intra_roof(const json& facts, int local, const ResultRecord& r) {
  const json& gpus = facts.value("gpus", json::array());
  if (static_cast<int>(gpus.size()) < local) {
    return unknown(fmt::format("{} ranks per host but {} GPUs seen", local, gpus.size()));
  }
  std::optional<double> links, per_link;
  int gen = 0;
  bool nvswitch = true, nvls = true, any_nvlink = false, all_nvlink = true;
  for (int i = 0; i < local; ++i) {
    const json& g = gpus[i];
    auto up = number(g, "nvlinks_up");
    bool has = up && *up > 0;
    any_nvlink |= has;
    all_nvlink &= has;
    if (!has) continue;
    links = links ? std::min(*links, *up) : *up;
    if (auto l = number(g, "nvlink_link_GBps")) {
      per_link = per_link ? std::min(*per_link, *l) : *l;
      gen = static_cast<int>(number(g, "nvlink_generation").value_or(0));
    }
    nvswitch &= g.value("nvswitch", false);
    nvls &= g.value("nvls", false);
  }
  if (any_nvlink && all_nvlink) {
    if (!per_link) return unknown("NVLink generation (no compute capability from NVML)");
    const double link = *links * *per_link;
    std::string basis =
        fmt::format("NVLink{} x{:g} {}", gen, *links, nvswitch ? "via NVSwitch" : "direct mesh");
    const std::string algo = r.algorithm;
    const bool nvls_algo =
        algo == "nvls" || algo == "nvlstree" || (algo == "default" && nvls && local > 1);
    if (r.collective == "allreduce" && nvls_algo && nvls && local > 1) {
      // The switch reduces: every GPU's link carries the message once each way, so nccl-tests'
      // busbw (which counts 2(n-1)/n of it) exceeds the link rate.
      return {RoofKind::Nvls, link * 2.0 * (local - 1) / local,
              fmt::format("NVLS: {}, the switch reduces (busbw bound {:.0f} x 2({}-1)/{})", basis,
                          link, local, local)};
    }
    return {RoofKind::NvLink, link, basis};
  }
  // PCIe: through one switch when every GPU sits below the same one, else through the CPU.
  std::set<std::string> switches;
  bool redirect = false;
  std::optional<double> own, to_cpu;
  std::string link_text;
  for (int i = 0; i < local; ++i) {
    const json& g = gpus[i];
    switches.insert(g.value("switch", std::string()));
    redirect |= g.value("p2p_redirect", false);
    auto o = number(g, "pcie_GBps");
    auto c = number(g, "pcie_to_cpu_GBps");
    if (!o || !c) return unknown(fmt::format("PCIe link of GPU {}", g.value("bdf", "?")));
    if (!own || *o < *own) link_text = g.value("pcie_link", "");
    own = own ? std::min(*own, *o) : *o;
    to_cpu = to_cpu ? std::min(*to_cpu, *c) : *c;
  }
  const bool one_switch = switches.size() == 1 && !switches.begin()->empty();
  if (redirect) {
    // Peer access is off (ACS redirects peer requests): data is staged in host memory.
    Roof roof{
        RoofKind::Pcie, *to_cpu,
        fmt::format("PCIe {:.1f} GB/s, host staging (peer access off: ACS redirect)", *to_cpu)};
    if (auto mem = number(facts.value("host_memory", json::object()), "copy_all_GBps")) {
      if (*mem / local < *to_cpu) {
        roof.GBps = *mem / local;
        roof.basis += fmt::format(", host memory {:.1f} GB/s shared by {}", *mem, local);
      }
    }
    return roof;
  }
  if (one_switch) {
    return {RoofKind::Pcie, *own,
            fmt::format("PCIe {} through a switch ({:.1f} GB/s)", link_text, *own)};
  }
  return {RoofKind::Pcie, *to_cpu, fmt::format("PCIe through the CPU ({:.1f} GB/s)", *to_cpu)};
}

bool rooted(const std::string& c) {
  return c == "broadcast" || c == "reduce" || c == "gather" || c == "scatter";
}

// Host memory: every local rank copies at the rate one thread reaches, or an equal share of what
// all CPUs reach together, whichever is lower. A rooted collective's busiest rank (the root, or
// the one receiver of two ranks) copies while others wait, so it is bounded by one thread alone.
// Where the case's buffers fit in the CPU caches, host memory does not bound it: no roof.
Roof host_memory_roof(const json& facts, int local, const ResultRecord& r) {
  const json& mem = facts.value("host_memory", json(nullptr));
  if (!mem.is_object()) return unknown("host memory bandwidth not measured");
  auto one = number(mem, "copy_1thread_GBps");
  auto all = number(mem, "copy_all_GBps");
  if (!one || !all || *one <= 0) return unknown("host memory bandwidth not measured");
  const double per_rank = rooted(r.collective) ? *one : std::min(*one, *all / std::max(1, local));
  const double k = host_copies_per_busbw_byte(r.collective);
  Roof roof{RoofKind::HostMemory, per_rank / k,
            fmt::format("host copy {:.1f} GB/s per rank ({} ranks, {:.1f} GB/s together; {:g} "
                        "copies per busbw byte; {})",
                        per_rank, local, *all, k, mem.value("source", std::string("measured")))};
  const json& caches = facts.value("caches", json(nullptr));
  if (auto cache = caches.is_object() ? number(caches, "bytes") : std::nullopt;
      cache && *cache > 0) {
    const double ws = host_working_set_bytes(r, local);
    if (ws < kBeyondCachesFactor * *cache) {
      return {RoofKind::Cache, std::nullopt,
              fmt::format("cache: the {} ranks' buffers ({}) are within {:g} x the host's {} of "
                          "CPU caches ({}), which copy faster than memory: the host copy roof "
                          "({:.1f} GB/s) does not bound them",
                          local, format_size(static_cast<std::uint64_t>(ws)), kBeyondCachesFactor,
                          format_size(static_cast<std::uint64_t>(*cache)),
                          caches.value("text", std::string("sysfs")), per_rank / k)};
    }
  }
  return roof;
}

// The network of one host: its ports' rates together, shared by its ranks.
Roof network_roof(const json& facts, int local, int nranks, const ResultRecord& r, bool gpu) {
  const json& nics = facts.value("nics", json::array());
  double total_gbps = 0, best_gbps = 0;
  std::string source;
  for (const auto& n : nics) {
    double g = number(n, "gbps").value_or(0);
    total_gbps += g;
    best_gbps = std::max(best_gbps, g);
    source = n.value("source", std::string());
  }
  if (total_gbps <= 0) {
    return unknown("no network port with a known rate (a virtual NIC?): give --roof-link-gbps");
  }
  const double total = total_gbps / 8;  // GB/s
  const int remote = nranks - local;
  Roof roof{RoofKind::Network, total, ""};
  std::string shape = fmt::format("network: {} x {:g} Gb/s per host{}", nics.size(),
                                  total_gbps / static_cast<double>(nics.size()),
                                  source == "--roof-link-gbps" ? " (given)" : "");
  if ((r.collective == "alltoall" || r.collective == "alltoallv") && remote > 0) {
    // Alltoall cannot combine NICs: each rank sends its remote share through one (alltoallv's
    // busbw is its busiest rank's, which the same holds for).
    const double per_rank = std::min(best_gbps / 8, total / local);
    roof.GBps = per_rank * (nranks - 1) / remote;
    shape += fmt::format(", {}: 1 NIC per rank", r.collective);
  } else if ((r.collective == "gather" || r.collective == "scatter") && remote > 0) {
    roof.GBps = total * (nranks - 1) / remote;  // the root's host carries the remote part
  }
  if (gpu) {
    const bool gdr = facts.value("gdr", false);
    shape += gdr ? ", GDR" : ", no GDR: host staging";
    if (!gdr) {
      // Without GPUDirect RDMA every byte is written to host memory and read from it on each
      // side: two copies' worth per busbw byte.
      if (auto mem = number(facts.value("host_memory", json::object()), "copy_all_GBps")) {
        if (*mem / 2 < *roof.GBps) {
          roof.GBps = *mem / 2;
          shape += fmt::format(" through {:.1f} GB/s host memory", *mem);
        }
      }
    }
  }
  roof.basis = shape;
  return roof;
}

bool tree_family(const std::string& algo) {
  return algo == "tree" || algo == "nvls" || algo == "nvlstree" || algo.starts_with("collnet");
}

}  // namespace

Roof roof_for(const ResultRecord& r, const json& topology) {
  if (r.collective == "barrier" || !r.busbw_GBps) return unknown("no bandwidth (barrier)");
  if (!topology.is_object() || !topology.contains("roof_facts") ||
      !topology["roof_facts"].is_object() || topology["roof_facts"].empty()) {
    return unknown("no hardware facts recorded with these results");
  }
  if (r.nranks < 2) return unknown("one rank moves no data");
  const int nnodes = std::max(1, r.nnodes);
  const int local = (r.nranks + nnodes - 1) / nnodes;
  const BackendEntry* backend = find_backend(r.backend);
  const RoofModel model = backend ? backend->roof : RoofModel::None;
  const bool gpu = model == RoofModel::GpuLinks;
  if (gpu && nnodes == 2 && r.collective == "allreduce" && tree_family(r.algorithm)) {
    return unknown(fmt::format(
        "the network is not measured by {} at 2 nodes (busbw can exceed what the NICs carry); "
        "use ring",
        r.algorithm));
  }
  if (model == RoofModel::None) {
    return unknown(fmt::format("no model for backend {}", r.backend));
  }
  Roof worst;
  std::string worst_host;
  int hosts = 0;
  for (const auto& [host, facts] : topology["roof_facts"].items()) {
    if (!facts.is_object()) return unknown(fmt::format("no hardware facts from host {}", host));
    ++hosts;
    Roof roof = gpu ? gpu_intra_roof(facts, local, r) : host_memory_roof(facts, local, r);
    const bool cached = roof.kind == RoofKind::Cache;
    if (nnodes > 1 && (roof.GBps || cached)) {
      // Across nodes the network bounds the ring whether the data sits in caches or not.
      Roof net = network_roof(facts, local, r.nranks, r, gpu);
      if (!net.GBps) return unknown(fmt::format("{}: {}", host, net.basis.substr(9)));
      if (cached || *net.GBps < *roof.GBps) roof = net;
    }
    if (!roof.GBps) {
      if (cached) return roof;  // every host has the same buffers; one says why
      return hosts > 1 || nnodes > 1 ? unknown(fmt::format("{}: {}", host, roof.basis.substr(9)))
                                     : roof;
    }
    if (hosts == 1 || lower(roof, worst)) {
      worst = roof;
      worst_host = host;
    }
  }
  if (hosts == 0) return unknown("no hardware facts recorded with these results");
  if (hosts > 1) worst.basis += fmt::format(" (lowest: {})", worst_host);
  return worst;
}

void apply_roof(ResultRecord& r, const json& topology) {
  // A file read back without hardware facts (CSV) keeps the roof it was written with.
  const bool facts = topology.is_object() && topology.contains("roof_facts");
  if (facts || r.roof_basis.empty()) {
    Roof roof = roof_for(r, topology);
    r.roof_basis = roof.basis;
    r.roof_GBps = roof.GBps;
  }
  r.efficiency.reset();
  if (!r.roof_GBps || *r.roof_GBps <= 0 || !r.busbw_GBps || !r.algbw_GBps || *r.algbw_GBps <= 0)
    return;
  // The bytes busbw counts, moved at the roof.
  const double bus_bytes = static_cast<double>(r.bytes) * (*r.busbw_GBps / *r.algbw_GBps);
  const double at_roof_us = bus_bytes / (*r.roof_GBps * 1e9) * 1e6;
  if (at_roof_us >= kBandwidthDominatedUs) r.efficiency = *r.busbw_GBps / *r.roof_GBps;
}

namespace {

// Two decimals, or two significant digits below 0.1 so that a collapse reads as one.
std::string efficiency_text(double e) {
  return e >= 0.1 ? fmt::format("{:.2f}", e) : fmt::format("{:.2g}", e);
}

}  // namespace

LargeMessageEfficiency large_message_efficiency(const std::vector<const ResultRecord*>& records) {
  LargeMessageEfficiency out;
  std::set<std::uint64_t, std::greater<>> sizes;
  for (const auto* r : records) {
    if (r->efficiency) sizes.insert(r->bytes);
    if (out.basis.empty() || (r->roof_GBps && !out.roof_GBps)) {
      out.basis = r->roof_basis;
      out.roof_GBps = r->roof_GBps;
    }
  }
  if (sizes.empty()) {
    // Every size in the caches: say so, with the largest size's figures.
    const ResultRecord* largest = nullptr;
    for (const auto* r : records) {
      if (!largest || r->bytes > largest->bytes) largest = r;
    }
    if (largest && roof_kind_of_basis(largest->roof_basis) == RoofKind::Cache) {
      out.kind = RoofKind::Cache;
      out.basis = largest->roof_basis;
      out.why_not = fmt::format("{} at {}, the largest size: measure sizes beyond the caches",
                                largest->roof_basis, format_size(largest->bytes));
      return out;
    }
    bool roof = false;
    for (const auto* r : records) roof |= r->roof_GBps.has_value();
    out.why_not = roof ? fmt::format(
                             "no size large enough for bandwidth to dominate (moving "
                             "the bytes at the roof must take {:g} us or more)",
                             kBandwidthDominatedUs)
                       : (out.basis.empty() ? std::string("no roof") : out.basis);
    return out;
  }
  std::vector<std::uint64_t> top(sizes.begin(), sizes.end());
  if (top.size() > 3) top.resize(3);
  std::vector<double> values;
  for (const auto* r : records) {
    if (!r->efficiency || std::find(top.begin(), top.end(), r->bytes) == top.end()) continue;
    values.push_back(*r->efficiency);
    if (r->bytes == top.front()) {
      out.basis = r->roof_basis;
      out.roof_GBps = r->roof_GBps;
    }
  }
  out.efficiency = median_of(values);
  out.kind = roof_kind_of_basis(out.basis);
  out.max_bytes = top.front();
  out.min_bytes = top.back();
  out.sizes = static_cast<int>(top.size());
  // A library that maps its buffers afresh on every call is bound by page faults, which the
  // roof (memory already mapped) does not describe: say so with the figures, never a verdict.
  const ResultRecord* faulting = nullptr;
  for (const auto* r : records) {
    if (!r->efficiency || !r->fault_bytes || r->bytes == 0 ||
        std::find(top.begin(), top.end(), r->bytes) == top.end()) {
      continue;
    }
    const double share = *r->fault_bytes / static_cast<double>(r->bytes);
    if (share >= kAllocatorBoundShare &&
        (!faulting || share > *faulting->fault_bytes / static_cast<double>(faulting->bytes))) {
      faulting = r;
    }
  }
  if (faulting) {
    out.why_not = fmt::format(
        "{} of the {:.3g} GB/s {} roof, but the ranks page-faulted {} per call at {}: the "
        "library maps its buffers afresh on each call, so its allocator, not what the roof "
        "describes, bounds it",
        efficiency_text(*out.efficiency), out.roof_GBps.value_or(0), roof_kind_name(out.kind),
        format_size(static_cast<std::uint64_t>(*faulting->fault_bytes)),
        format_size(faulting->bytes));
    out.efficiency.reset();
    out.allocator_bound = true;
  }
  return out;
}

std::string efficiency_line(const std::string& collective, const LargeMessageEfficiency& e) {
  if (!e.efficiency) return fmt::format("{}: not judged: {}", collective, e.why_not);
  return fmt::format("{}: {} of the {:.3g} GB/s {} roof at {} ({})", collective,
                     efficiency_text(*e.efficiency), e.roof_GBps.value_or(0),
                     roof_kind_name(e.kind),
                     e.min_bytes == e.max_bytes
                         ? format_size(e.max_bytes)
                         : fmt::format("{}-{}", format_size(e.min_bytes), format_size(e.max_bytes)),
                     e.basis);
}

}  // namespace cb
