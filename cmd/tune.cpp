// `commbench tune`: run's flags (-A all by default) and tune's own -> app/tune (the run, then
// per collective and size range the algorithm to use, and files that apply it).
#include <memory>

#include "app/tune.hpp"
#include "cmd/run.hpp"
#include "cmd/subcommands.hpp"
#include "collectives/backends/registry.hpp"

namespace cb {

void register_tune(CLI::App& app, Action& action) {
  auto rq = std::make_shared<RunRequest>();
  auto tq = std::make_shared<TuneRequest>();
  rq->algorithms = "all";
  CLI::App* tune = app.add_subcommand(
      "tune", "sweep every algorithm and recommend one per collective and size range");
  add_run_options(tune, *rq);
  tune->add_option("--min-gain", tq->min_gain,
                   "percent a forced algorithm must beat default by (default 2)");
  const auto& files = tuning_files();
  tq->emit.resize(files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    tune->add_option(files[i].option, tq->emit[i], files[i].help);
  }
  tune->add_option("--env", tq->env,
                   "NAME=v1,v2,...: a grid axis of environment values, each combination a fresh "
                   "job (\\, is a comma inside a value); repeatable");
  tune->add_option("--env-grid", tq->env_grid,
                   "TOML file with an [env] table of NAME = [values] (added to --env)");
  tune->add_option("--resume", tq->resume,
                   "skip the combinations whose records a .jsonl from an earlier sweep holds");
  tune->add_option("--emit-env", tq->emit_env,
                   "write NAME=VALUE lines of the best combination (NCCL_CONF_FILE, shell)");
  tune->add_option("--rounds", tq->rounds,
                   "launches of each combination and of the current environment, interleaved in "
                   "a shuffled order (default 5)");
  tune->add_flag("--side-by-side", tq->side_by_side,
                 "print the run's table, one column group per algorithm and combination, instead "
                 "of one line per candidate at each size");
  tune->callback([rq, tq, &action] {
    check_tune_request(*tq, rq->outputs);
    action = [rq, tq] { return cb::tune(*rq, *tq); };
  });
}

}  // namespace cb
