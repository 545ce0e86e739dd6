// `commbench check SPEC [RESULTS...]`: evaluate an acceptance spec against result files and the
// topology (from --topology FILE, else probed); exit 5 when an error-severity requirement fails.
#include <memory>

#include "cmd/subcommands.hpp"
#include "jobs/check.hpp"

namespace cb {

void register_check(CLI::App& app, Action& action) {
  auto rq = std::make_shared<CheckRequest>();
  CLI::App* c = app.add_subcommand(
      "check", "evaluate an acceptance spec against results and topology; exit 5 on a failure");
  c->add_option("SPEC", rq->spec,
                "acceptance spec (TOML): [[results]] and [[topology]] tables (optional with "
                "--expect auto)");
  c->add_option("RESULTS", rq->results, "result files (.json, .jsonl, .csv) from `run --output`");
  c->add_option("--topology", rq->topology,
                "commbench/topology/v1 or cluster-topology/v1 document (`topo --format json`) "
                "instead of probing");
  c->add_option("--links", rq->links,
                "commbench/links/v2 document (`probe links --format json`) for [[links]] tables");
  c->add_option("--sysfs-root", rq->sysfs_root, "probe a captured tree laid out like /sys");
  c->add_option("--junit", rq->junit, "also write JUnit XML: one testcase per requirement");
  c->add_option("--expect", rq->expect,
                "auto: judge every collective's large-message efficiency against this "
                "hardware's roof, without a spec");
  c->add_option("--min-efficiency", rq->min_efficiency,
                "with --expect auto: the efficiency every collective must reach (default: per "
                "kind of roof, see docs)");
  c->add_option("--reference", rq->references,
                "with --expect auto: a healthy run of this kind of node (`run --repeat N "
                "--output FILE`) to judge host-memory collectives against; repeatable")
      ->allow_extra_args(false);  // one file per --reference: the rest are results
  c->add_option("--fleet-fraction", rq->fleet_fraction,
                "with --expect auto and several hosts: the fraction of its peers' median each "
                "host must reach (default 0.75)");
  c->add_option("--format", rq->format, "stdout format: table, json, md (default table)");
  c->add_option("--output", rq->output, "also write the report to FILE (.txt .json .md)");
  c->callback([rq, &action] { action = [rq] { return check(*rq); }; });
}

}  // namespace cb
