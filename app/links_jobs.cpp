#include "app/links_jobs.hpp"

#include <fmt/format.h>

#include "app/job_sweep.hpp"  // kind_of_exit
#include "common/error.hpp"
#include "launch/job.hpp"
#include "launch/mpi_relaunch.hpp"
#include "probes/links_hcas.hpp"
#include "probes/links_nics.hpp"
#include "probes/links_passes.hpp"
#include "report/format/document_output.hpp"

namespace cb {

namespace {

// The rails when --nics is not given: this host's HCAs with an active port (NCCL) or its NICs
// with an IPv4 address (TCP), taken to be every host's; each pass's ranks check that every host
// has its NIC (a usage error naming the host that lacks it).
std::vector<std::string> local_rails(const LinksOptions& o) {
  if (!o.nics.empty()) return o.nics;
  Sysfs sys;
  std::vector<std::string> rails =
      o.transport == LinksTransport::Nccl ? active_hcas(sys) : nics_with_address();
  if (rails.empty()) {
    usage_error("--launch: this host has no {}: give --nics",
                o.transport == LinksTransport::Nccl
                    ? "HCA with an active port (/sys/class/infiniband)"
                    : "NIC with an IPv4 address");
  }
  return rails;
}

}  // namespace

int probe_links_in_jobs(const std::string& launch, const DocumentOutput& out, const LinksOptions& o,
                        const std::vector<std::string>& args) {
  const std::vector<std::string> prefix = split_command(launch);
  launcher_kind(prefix.front(), build_mpi_flavor());
  check_launcher_exists(prefix.front());
  const std::vector<std::string> rails = local_rails(o);
  std::vector<nlohmann::json> docs;
  for (const LinksPass& pass : plan_links_passes(o.transport, rails, args)) {
    JobSpec spec;
    spec.args = pass.args;
    spec.env = pass.env;
    spec.launch_prefix = prefix;
    spec.document = true;
    const JobOutcome job = run_job(spec);
    if (job.exit_code != 0)
      fail(kind_of_exit(job.exit_code), "pass {} of {} ({} {}): {}", pass.rail + 1, rails.size(),
           transport_name(o.transport), pass.nic, job.message);
    try {
      docs.push_back(nlohmann::json::parse(job.document));
    } catch (const nlohmann::json::exception&) {
      runtime_error("pass {} of {} ({}): the job wrote no links document", pass.rail + 1,
                    rails.size(), pass.nic);
    }
  }
  const LinksResult r = merge_links_passes(docs, rails, o);
  emit_document(out, links_to_json(r), [&](std::ostream& os) { print_links(r, os); });
  return 0;
}

}  // namespace cb
