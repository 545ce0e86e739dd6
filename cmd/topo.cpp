// `commbench topo`: topo's flag table -> app/topo (NUMA, PCIe tree and links, GPUs and their
// matrix, NICs and IB ports, from this host's /sys or a captured tree; under a launcher, the
// first rank on each host probes and rank 0 reports every host, commbench/cluster-topology/v1).
#include <memory>

#include "app/topo.hpp"
#include "cmd/flags.hpp"
#include "cmd/subcommands.hpp"

namespace cb {

void register_topo(CLI::App& app, Action& action) {
  auto rq = std::make_shared<TopoRequest>();
  CLI::App* t = app.add_subcommand("topo",
                                   "probe and print topology: NUMA, PCIe tree and links, GPUs and "
                                   "their matrix, NICs and IB ports");
  add_flags(t, topo_flags(), *rq);
  t->callback([rq, &action] { action = [rq] { return topo(*rq); }; });
}

}  // namespace cb
