// The topology summary `run` records in its meta, so that comparing runs shows when the
// hardware differs.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "common/error.hpp"
#include "probes/roof_facts.hpp"
#include "probes/topology.hpp"

namespace cb {

namespace {

// FNV-1a, 64 bit: stable across builds and platforms, which std::hash is not.
std::string fingerprint(const std::string& text) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return fmt::format("{:016x}", h);
}

}  // namespace

nlohmann::json host_topology_facts(const std::string& sysfs_root, const RoofInputs& roof) {
  Sysfs sys(sysfs_root);
  TopologyOptions options;
  options.use_nvml = false;  // keeps start-up fast; the PCI ids identify the GPU model
  Topology topo = probe_topology(sys, options);
  // NVLinks are known only to NVML: asked only where there are GPUs.
  if (!topo.gpus.empty() && is_live_sysfs(sysfs_root)) topo = probe_topology(sys);
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : topo.gpus) {
    const PciDevice* d = find_device(topo.pci, g.bdf);
    gpus.push_back({{"bdf", g.bdf},
                    {"model", d ? fmt::format("{:04x}:{:04x}", d->vendor, d->device) : "unknown"}});
  }
  nlohmann::json nics = nlohmann::json::array();
  for (const auto& n : topo.nics) {
    nlohmann::json rates = nlohmann::json::array();
    for (const auto& p : n.ports)
      rates.push_back(p.rate_gbps ? nlohmann::json(*p.rate_gbps) : nlohmann::json(nullptr));
    nics.push_back({{"name", n.name}, {"rates_gbps", rates}});
  }
  nlohmann::json numa = nlohmann::json::array();
  for (const auto& n : topo.numa) numa.push_back(n.cpus.size());
  nlohmann::json stable = {{"gpus", gpus}, {"nics", nics}, {"numa_node_cpus", numa}};
  nlohmann::json facts = stable;
  facts["host"] = topo.host.value_or("unknown");
  facts["fingerprint"] = fingerprint(stable.dump());
  facts["roof"] = roof_facts(topo, roof, &sys);  // not in the fingerprint: measured figures vary
  return facts;
}

nlohmann::json host_topology_facts(const std::string& sysfs_root) {
  RoofInputs inputs;
  inputs.host_memory = false;  // no measurement unless asked for
  return host_topology_facts(sysfs_root, inputs);
}

nlohmann::json topology_summary(const std::vector<std::string>& per_rank_facts) {
  nlohmann::json hosts = nlohmann::json::array();
  nlohmann::json gpus = nlohmann::json::object(), nics = nlohmann::json::object();
  nlohmann::json prints = nlohmann::json::object(), roofs = nlohmann::json::object();
  std::vector<std::string> all;
  for (const auto& text : per_rank_facts) {
    nlohmann::json f = nlohmann::json::parse(text, nullptr, false);
    if (f.is_discarded() || !f.is_object()) runtime_error("malformed topology facts from a rank");
    std::string host = f.value("host", "unknown");
    if (prints.contains(host)) continue;  // one entry per host, in rank order
    hosts.push_back(host);
    gpus[host] = f.value("gpus", nlohmann::json::array()).size();
    nics[host] = f.value("nics", nlohmann::json::array()).size();
    prints[host] = f.value("fingerprint", "");
    roofs[host] = f.value("roof", nlohmann::json(nullptr));
    all.push_back(f.value("fingerprint", ""));
  }
  std::sort(all.begin(), all.end());
  std::string joined;
  for (const auto& p : all) joined += p + ";";
  return {{"hosts", hosts},
          {"gpus_per_host", gpus},
          {"nics_per_host", nics},
          {"host_fingerprints", prints},
          {"fingerprint", fingerprint(joined)},
          {"roof_facts", roofs}};
}

}  // namespace cb
