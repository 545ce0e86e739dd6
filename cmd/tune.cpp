// `commbench tune`: run's flags (-A all by default) and tune's own -> app/tune (the run, then per
// collective and size range the algorithm to use, and files that apply it).
#include <memory>

#include "app/tune.hpp"
#include "cmd/flags.hpp"
#include "cmd/subcommands.hpp"

namespace cb {

void register_tune(CLI::App& app, Action& action) {
  auto rq = std::make_shared<RunRequest>();
  auto tq = std::make_shared<TuneRequest>();
  rq->algorithms = "all";
  CLI::App* tune = app.add_subcommand(
      "tune", "sweep every algorithm and recommend one per collective and size range");
  add_flags(tune, run_flags(), *rq);
  add_flags(tune, tune_flags(), *tq);
  tune->callback([rq, tq, &action] { action = [rq, tq] { return cb::tune(*rq, *tq); }; });
}

}  // namespace cb
