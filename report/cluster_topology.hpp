// Topology across hosts: each host's commbench/topology/v1 document, grouped by a fingerprint of
// its shape, and for each host outside the largest group what differs from it.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "common/schema.hpp"

namespace cb {

// The fields of a topology/v1 document that describe the hardware's shape, flattened to
// "path" -> value: array elements are named by their bdf, name, port, index or id
// ("pci_devices[0000:18:00.0].link.current_gts"). Leaves out what differs between identical
// hosts: the host name, warnings (they restate fields), and NUMA memory sizes (ballooning VMs).
std::map<std::string, nlohmann::json> topology_shape(const nlohmann::json& topology);

// 16 hex digits (FNV-1a 64 over the shape).
std::string topology_fingerprint(const nlohmann::json& topology);

// {"schema": cluster-topology/v1, "hosts": [{host, fingerprint, topology}], "groups":
// [{fingerprint, hosts}] (largest first; ties: first host first), "differences": [{host, field,
// value, majority}] (value or majority null where the field is absent)}. `topologies` in rank
// order, one per host.
nlohmann::json cluster_topology(const std::vector<nlohmann::json>& topologies);

// A table: the groups, then each difference.
void print_cluster_topology(const nlohmann::json& doc, std::ostream& out);

}  // namespace cb
