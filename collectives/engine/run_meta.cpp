#include "collectives/engine/run_meta.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "common/clock.hpp"
#include "common/environment.hpp"
#include "common/host_name.hpp"
#include "common/invocation.hpp"

namespace cb {

RunHosts gather_hosts(Control& control) {
  RunHosts h;
  std::map<std::string, int> per;
  const std::string here = host_name();
  for (const auto& name : control.allgather(here)) {
    if (per[name]++ == 0) h.names.push_back(name);
  }
  for (const auto& [name, n] : per) h.ranks_per_node = std::max(h.ranks_per_node, n);
  h.ranks_here = per[here];
  return h;
}

RunMeta assemble_run_meta(Control& control, const RunHosts& hosts,
                          const std::vector<std::unique_ptr<Backend>>& backends,
                          const RunMetaSources& sources) {
  RunMeta meta;
  meta.version = sources.version;
  meta.git_commit = sources.git_commit;
  meta.start_time = utc_now_iso8601();
  meta.command_line = invocation();
  meta.hosts = hosts.names;
  meta.nranks = control.size();
  meta.nnodes = static_cast<int>(hosts.names.size());
  meta.ranks_per_node = hosts.ranks_per_node;
  for (auto& b : backends) meta.libraries[b->name()] = b->library_detail();
  meta.environment = steering_environment();
  meta.launcher = launcher_facts(sources.launch);
  if (!sources.backend_choice.empty()) {
    std::vector<std::string> names;
    for (auto& b : backends) names.push_back(b->name());
    meta.backend_choice =
        fmt::format("{} (no -B): {}", fmt::join(names, ","), sources.backend_choice);
  }
  // Every rank's steering variables, so a job can tell whether all ranks saw the same settings.
  meta.environment_mismatch =
      environment_mismatches(control.allgather(nlohmann::json(meta.environment).dump()));
  // Each host's hardware fingerprint, so that comparing runs can tell when the hardware differs.
  meta.topology = sources.summarise_topology(control.allgather(sources.topology_facts));
  return meta;
}

}  // namespace cb
