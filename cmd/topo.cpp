// `commbench topo`: NUMA, PCIe tree and links, GPUs and their matrix, NICs and IB ports, from
// this host's /sys or a captured tree.
#include <iostream>
#include <sstream>

#include "cmd/subcommands.hpp"
#include "probes/topology.hpp"
#include "report/atomic_file.hpp"
#include "report/error.hpp"

namespace cb {

namespace {

struct TopoRequest {
  std::string format = "table";
  std::string output;
  std::string sysfs_root = "/sys";
  std::string capture;
};

std::string render(const Topology& topo, const std::string& format) {
  std::ostringstream out;
  if (format == "json") {
    out << topology_to_json(topo).dump(2) << "\n";
  } else {
    print_topology(topo, out);
  }
  return out.str();
}

int execute(const TopoRequest& rq) {
  if (rq.format != "table" && rq.format != "json") {
    usage_error("invalid --format '{}': expected table or json", rq.format);
  }
  std::string out_format;
  if (!rq.output.empty()) {
    auto dot = rq.output.rfind('.');
    std::string ext = dot == std::string::npos ? "" : rq.output.substr(dot);
    if (ext == ".json") {
      out_format = "json";
    } else if (ext == ".txt") {
      out_format = "table";
    } else {
      usage_error("invalid --output '{}': expected a .json or .txt file name", rq.output);
    }
  }
  Sysfs sys(rq.sysfs_root);
  if (!is_live_sysfs(rq.sysfs_root) && !sys.resolve("")) {
    usage_error("--sysfs-root '{}' is not a readable directory", rq.sysfs_root);
  }
  if (!is_live_sysfs(rq.sysfs_root) && !sys.resolve("bus/pci/devices") &&
      !sys.resolve("devices/system")) {
    usage_error(
        "--sysfs-root '{}' does not look like a sysfs tree (no bus/pci/devices or devices/system)",
        rq.sysfs_root);
  }
  Topology topo = probe_topology(sys);
  if (!rq.capture.empty()) capture_snapshot(sys, topo, rq.capture);
  if (!rq.output.empty()) write_file_atomically(rq.output, render(topo, out_format));
  std::cout << render(topo, rq.format);
  return 0;
}

}  // namespace

void register_topo(CLI::App& app, Action& action) {
  auto rq = std::make_shared<TopoRequest>();
  CLI::App* t = app.add_subcommand("topo",
                                   "probe and print topology: NUMA, PCIe tree and links, GPUs and "
                                   "their matrix, NICs and IB ports");
  t->add_option("--format", rq->format, "stdout format: table or json (default table)");
  t->add_option("--output", rq->output, "also write FILE (.json, or .txt for the tables)");
  t->add_option("--sysfs-root", rq->sysfs_root,
                "read a captured tree laid out like /sys instead of /sys");
  t->add_option("--capture", rq->capture,
                "copy every file read into DIR (a new directory) as a snapshot");
  t->callback([rq, &action] { action = [rq] { return execute(*rq); }; });
}

}  // namespace cb
