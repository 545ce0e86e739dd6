// `commbench replay`: replay's flag table and the rows of run's it takes -> app/replay (a
// training step's communication replayed with overlap).
#include <memory>

#include "app/replay.hpp"
#include "cmd/flags.hpp"

namespace cb {

void register_replay(CLI::App& app, Action& action) {
  auto rq = std::make_shared<ReplayRequest>();
  CLI::App* cmd = app.add_subcommand(
      "replay",
      "a training step's communication (DDP buckets, FSDP gathers) overlapped with its compute: "
      "how much of it is exposed");
  add_flags(cmd, replay_flags(), *rq);
  add_flags(cmd, replay_run_flags(), rq->run);
  cmd->callback([rq, &action] { action = [rq] { return replay(*rq); }; });
}

}  // namespace cb
