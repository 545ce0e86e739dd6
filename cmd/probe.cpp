// `commbench probe membw|copy|links`: each probe's flag table -> app/probe (measured bandwidth
// matrices).
#include <memory>

#include "app/probe.hpp"
#include "cmd/flags.hpp"
#include "cmd/subcommands.hpp"

namespace cb {

namespace {

void register_one(CLI::App* probe, Action& action, const char* name, const char* help,
                  const Flags<ProbeRequest>& flags, int (*run)(const ProbeRequest&)) {
  auto rq = std::make_shared<ProbeRequest>();
  CLI::App* p = probe->add_subcommand(name, help);
  add_flags(p, flags, *rq);
  p->callback([rq, run, &action] { action = [rq, run] { return run(*rq); }; });
}

}  // namespace

void register_probe(CLI::App& app, Action& action) {
  CLI::App* probe =
      app.add_subcommand("probe", "measured bandwidth: membw, copy (GPU), links (MPI rank pairs)");
  probe->require_subcommand(1);
  register_one(probe, action, "membw", "memory bandwidth matrix, CPU NUMA node x memory node",
               membw_flags(), probe_membw);
  register_one(probe, action, "copy",
               "GPU copy bandwidth: H2D, D2H (pinned, pageable), D2D, P2P matrix", copy_flags(),
               probe_copy);
  register_one(probe, action, "links",
               "bandwidth and latency between hosts or ranks over MPI, with a straggler verdict "
               "(run under mpirun or srun)",
               links_flags(), probe_links);
}

}  // namespace cb
