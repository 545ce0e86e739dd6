#include "app/topo.hpp"

#include <algorithm>
#include <ostream>

#include "app/output_flags.hpp"
#include "app/run_fingerprint.hpp"
#include "collectives/backends/registry.hpp"
#include "common/error.hpp"
#include "common/host_name.hpp"
#include "core/process_start.hpp"
#include "launch/start.hpp"
#include "probes/topology.hpp"
#include "report/cluster_topology.hpp"

namespace cb {

namespace {

constexpr double kControlTimeoutSeconds = 300;

// The libraries this process finds, by name ("MPI", "NCCL", "CUDA": the `version` lines), so
// that hosts with different library versions differ.
nlohmann::json libraries() {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& line : backend_version_lines(BackendOptions{})) {
    auto colon = line.find(": ");
    if (colon != std::string::npos) out[line.substr(0, colon)] = line.substr(colon + 2);
  }
  return out;
}

void print_libraries(const nlohmann::json& libs, std::ostream& out) {
  out << "\nLibraries:\n";
  for (const auto& [name, version] : libs.items())
    out << "  " << name << ": " << version.get<std::string>() << "\n";
}

// A --sysfs-root other than the live /sys must look like a sysfs tree.
void check_sysfs_root(Sysfs& sys, const std::string& root) {
  if (is_live_sysfs(root)) return;
  if (!sys.resolve("")) usage_error("--sysfs-root '{}' is not a readable directory", root);
  if (!sys.resolve("bus/pci/devices") && !sys.resolve("devices/system")) {
    usage_error(
        "--sysfs-root '{}' does not look like a sysfs tree (no bus/pci/devices or "
        "devices/system)",
        root);
  }
}

int topo_here(const TopoRequest& rq, Sysfs& sys) {
  Topology topo = probe_topology(sys);
  if (!rq.capture.empty()) capture_snapshot(sys, topo, rq.capture);
  nlohmann::json doc = topology_to_json(topo);
  doc["libraries"] = libraries();
  emit_document(rq.out, doc, [&](std::ostream& os) {
    print_topology(topo, os);
    print_libraries(doc["libraries"], os);
  });
  return 0;
}

int topo_across_hosts(const TopoRequest& rq, Sysfs& sys, const LaunchInfo& launch) {
  if (!rq.capture.empty())
    usage_error("--capture works on one host: run topo --capture without a launcher");
  // topo's options are each rank's own (a captured tree, rank 0's outputs): no more to agree on.
  std::unique_ptr<Control> control =
      make_run_control(launch, kControlTimeoutSeconds, command_fingerprint("topo"));
  const std::string me = host_name();
  const std::vector<std::string> hosts = control->allgather(me);
  // One probe per host: the first rank there.
  const bool first_here =
      std::find(hosts.begin(), hosts.end(), me) - hosts.begin() == control->rank();
  std::string mine;
  if (first_here) {
    nlohmann::json j = topology_to_json(probe_topology(sys));
    j["host"] = me;  // where it ran, also for a captured tree
    j["libraries"] = libraries();
    mine = j.dump();
  }
  const std::vector<std::string> all = control->allgather(mine);
  if (control->rank() != 0) return 0;
  std::vector<nlohmann::json> docs;
  for (const auto& text : all)
    if (!text.empty()) docs.push_back(nlohmann::json::parse(text));
  nlohmann::json doc = cluster_topology(docs);
  emit_document(rq.out, doc, [&](std::ostream& os) { print_cluster_topology(doc, os); });
  return 0;
}

}  // namespace

const Flags<TopoRequest>& topo_flags() {
  static const Flags<TopoRequest> flags = [] {
    Flags<TopoRequest> f = document_flags(&TopoRequest::out);
    f.push_back(value_flag("--sysfs-root", &TopoRequest::sysfs_root,
                           "read a captured tree laid out like /sys instead of /sys"));
    f.push_back(value_flag("--capture", &TopoRequest::capture,
                           "copy every file read into DIR (a new directory) as a snapshot"));
    return f;
  }();
  return flags;
}

int topo(const TopoRequest& rq) {
  check_document_output(rq.out);
  Sysfs sys(rq.sysfs_root);
  check_sysfs_root(sys, rq.sysfs_root);
  const LaunchInfo launch = detect_launch();
  check_launch(launch, kControlTimeoutSeconds);
  if (launch.kind == LaunchInfo::Kind::Single || launch.size < 2) return topo_here(rq, sys);
  return topo_across_hosts(rq, sys, launch);
}

}  // namespace cb
