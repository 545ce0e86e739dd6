// The run's meta, written once per result file: version, start time, command line, hosts and
// ranks, each backend's library, the steering environment (and whether every rank saw the same),
// the launcher's facts, and the hosts' hardware summary.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "collectives/backend.hpp"
#include "common/record.hpp"
#include "core/process_start.hpp"

namespace cb {

struct RunHosts {
  std::vector<std::string> names;  // distinct, in rank order
  int ranks_per_node = 0;
  int ranks_here = 0;  // on this rank's host
};

// Collective over the control channel: every rank learns every rank's host.
RunHosts gather_hosts(Control& control);

struct RunMetaSources {
  std::string version;
  std::string git_commit;
  LaunchInfo launch;
  std::string backend_choice;  // why these backends when -B was not given, else empty
  std::string topology_facts;  // this host's hardware facts (JSON text)
  // Turns every rank's facts into the run's topology summary.
  std::function<nlohmann::json(const std::vector<std::string>&)> summarise_topology;
};

// Collective over the control channel: every rank gets the same meta.
RunMeta assemble_run_meta(Control& control, const RunHosts& hosts,
                          const std::vector<std::unique_ptr<Backend>>& backends,
                          const RunMetaSources& sources);

}  // namespace cb
