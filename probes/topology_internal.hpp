// Shared between the topology files: the probe (topology.cpp), its diagnosis
// (topology_diagnosis.cpp), the JSON document (topology_json.cpp) and snapshots
// (topology_snapshot.cpp).
#pragma once

#include <nlohmann/json.hpp>

#include "probes/topology.hpp"

namespace cb {

// Warnings about what limits collective bandwidth (slow PCIe links, missing NVLinks, ...).
void collect_warnings(Topology& topo);
// Loads the facts a snapshot carries (host, NVML). Absent file: unknown host, no NVML.
void read_snapshot_facts(Sysfs& sys, Topology& topo);

// A value, or JSON null when absent.
nlohmann::json opt_json(const auto& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace cb
