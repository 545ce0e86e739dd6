// `commbench run`: run's flag table -> app/run (the plan, then the sweep once or as fresh jobs).
#include "app/run.hpp"
#include "cmd/flags.hpp"

namespace cb {

void register_run(CLI::App& app, Action& action) {
  add_command(app, action, "run", "benchmark collectives: latency, bandwidth, validation",
              run_flags(), run);
}

}  // namespace cb
