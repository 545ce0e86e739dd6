// `commbench run`: run's flag table -> app/run (the plan, then the sweep once or as fresh jobs).
#include <memory>

#include "app/run.hpp"
#include "cmd/flags.hpp"
#include "cmd/subcommands.hpp"

namespace cb {

void register_run(CLI::App& app, Action& action) {
  auto rq = std::make_shared<RunRequest>();
  CLI::App* run =
      app.add_subcommand("run", "benchmark collectives: latency, bandwidth, validation");
  add_flags(run, run_flags(), *rq);
  run->callback([rq, &action] { action = [rq] { return cb::run(*rq); }; });
}

}  // namespace cb
