// `commbench topo`: NUMA, PCIe tree and links, GPUs and their matrix, NICs and IB ports, from
// this host's /sys or a captured tree. Under a launcher, the first rank on each host probes and
// rank 0 reports every host (commbench/cluster-topology/v1).
#include <memory>

#include "app/topo.hpp"
#include "cmd/document_output.hpp"
#include "cmd/subcommands.hpp"

namespace cb {

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
  t->callback([rq, &action] { action = [rq] { return topo(*rq); }; });
}

}  // namespace cb
