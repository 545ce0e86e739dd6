// `commbench topo`: topo's flag table -> app/topo (NUMA, PCIe tree and links, GPUs and their
// matrix, NICs and IB ports, from this host's /sys or a captured tree; under a launcher, the
// first rank on each host probes and rank 0 reports every host, commbench/cluster-topology/v1).
#include "app/topo.hpp"
#include "cmd/flags.hpp"

namespace cb {

void register_topo(CLI::App& app, Action& action) {
  add_command(app, action, "topo",
              "probe and print topology: NUMA, PCIe tree and links, GPUs and their matrix, NICs "
              "and IB ports",
              topo_flags(), topo);
}

}  // namespace cb
