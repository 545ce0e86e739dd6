// `commbench probe membw|copy|links`: each probe's flag table -> app/probe (measured bandwidth
// matrices).
#include "app/probe.hpp"
#include "cmd/flags.hpp"

namespace cb {

void register_probe(CLI::App& app, Action& action) {
  CLI::App* probe =
      app.add_subcommand("probe", "measured bandwidth: membw, copy (GPU), links (MPI rank pairs)");
  probe->require_subcommand(1);
  add_command(*probe, action, "membw", "memory bandwidth matrix, CPU NUMA node x memory node",
              membw_flags(), probe_membw);
  add_command(*probe, action, "copy",
              "GPU copy bandwidth: H2D, D2H (pinned, pageable), D2D, P2P matrix", copy_flags(),
              probe_copy);
  add_command(*probe, action, "links",
              "bandwidth and latency between hosts or ranks over MPI, with a straggler verdict "
              "(run under mpirun or srun)",
              links_flags(), probe_links);
}

}  // namespace cb
