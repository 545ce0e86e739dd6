// `commbench topo`: NUMA, PCIe tree and links, GPUs and their matrix, NICs and IB ports, from
// this host's /sys or a captured tree.
#include "cmd/document_output.hpp"
#include "cmd/subcommands.hpp"
#include "common/error.hpp"
#include "probes/topology.hpp"

namespace cb {

namespace {

struct TopoRequest {
  DocumentOutput out;
  std::string sysfs_root = "/sys";
  std::string capture;
};

int execute(const TopoRequest& rq) {
  check_document_output(rq.out);
  Sysfs sys(rq.sysfs_root);
  if (!is_live_sysfs(rq.sysfs_root)) {
    if (!sys.resolve(""))
      usage_error("--sysfs-root '{}' is not a readable directory", rq.sysfs_root);
    if (!sys.resolve("bus/pci/devices") && !sys.resolve("devices/system")) {
      usage_error(
          "--sysfs-root '{}' does not look like a sysfs tree (no bus/pci/devices or "
          "devices/system)",
          rq.sysfs_root);
    }
  }
  Topology topo = probe_topology(sys);
  if (!rq.capture.empty()) capture_snapshot(sys, topo, rq.capture);
  emit_document(rq.out, topology_to_json(topo),
                [&](std::ostream& os) { print_topology(topo, os); });
  return 0;
}

}  // namespace

void register_topo(CLI::App& app, Action& action) {
  auto rq = std::make_shared<TopoRequest>();
  CLI::App* t = app.add_subcommand("topo",
                                   "probe and print topology: NUMA, PCIe tree and links, GPUs and "
                                   "their matrix, NICs and IB ports");
  add_document_options(t, rq->out);
  t->add_option("--sysfs-root", rq->sysfs_root,
                "read a captured tree laid out like /sys instead of /sys");
  t->add_option("--capture", rq->capture,
                "copy every file read into DIR (a new directory) as a snapshot");
  t->callback([rq, &action] { action = [rq] { return execute(*rq); }; });
}

}  // namespace cb
