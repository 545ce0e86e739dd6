#include "jobs/run.hpp"

#include <sstream>

#include "collectives/engine/rank_run.hpp"
#include "common/output_path.hpp"
#include "common/version_info.hpp"
#include "probes/roof_facts.hpp"
#include "probes/topology.hpp"
#include "report/writer.hpp"

namespace cb {

void check_run_request(const RunRequest& rq) {
  run_settings(rq);
  parse_roof_inputs(rq.roof_link_gbps, rq.roof_host_memory);
  for (const auto& path : rq.outputs) check_output_path(path);
  std::ostringstream probe_format;
  make_stream_writer(rq.format, probe_format);  // validates --format before any work
  repeat_count(rq);
}

int run(const RunRequest& rq, const ExtraWriter& extra) {
  if (repeat_count(rq) > 1 || !rq.launch.empty()) return run_repeated(rq, extra);
  check_run_request(rq);
  check_distinct_outputs(rq.outputs);
  RunHooks hooks;
  hooks.rank0_writers = [&rq, &extra] {
    std::vector<std::unique_ptr<Writer>> writers;
    writers.push_back(make_stdout_writer(rq.format));
    for (const auto& path : rq.outputs) writers.push_back(make_file_writer(path));
    if (extra) writers.push_back(extra());
    return writers;
  };
  hooks.version = commbench_version();
  hooks.git_commit = commbench_git_commit();
  hooks.topology_facts = [&rq] {
    return host_topology_facts("/sys", parse_roof_inputs(rq.roof_link_gbps, rq.roof_host_memory))
        .dump();
  };
  hooks.summarise_topology = topology_summary;
  return run_request(rq, hooks);
}

}  // namespace cb
