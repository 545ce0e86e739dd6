// `commbench run`: flags -> a RunRequest -> app/run (the sweep once, or as fresh jobs).
#include "cmd/run.hpp"

#include <memory>

#include "app/run.hpp"
#include "cmd/subcommands.hpp"

namespace cb {

namespace {

// `--launch ''` would read as no --launch at all and run here, not under the launcher meant.
const CLI::Validator& launcher_prefix() {
  static const CLI::Validator v(
      [](std::string& value) -> std::string {
        if (value.find_first_not_of(" \t\n") != std::string::npos) return {};
        return "an empty launcher prefix: expected e.g. 'mpirun -np 4' or 'srun -N 2'";
      },
      "PREFIX");
  return v;
}

}  // namespace

void add_run_options(CLI::App* cmd, RunRequest& rq) {
  for (const auto& f : run_flags()) {
    if (f.toggle) {
      cmd->add_flag(f.names, rq.*f.toggle, f.help);
    } else if (f.list) {
      cmd->add_option(f.names, rq.*f.list, f.help);
    } else {
      CLI::Option* o = cmd->add_option(f.names, f.text(rq), f.help);
      if (f.long_name() == "--launch") o->check(launcher_prefix());
    }
  }
}

void register_run(CLI::App& app, Action& action) {
  auto rq = std::make_shared<RunRequest>();
  CLI::App* run =
      app.add_subcommand("run", "benchmark collectives: latency, bandwidth, validation");
  add_run_options(run, *rq);
  run->callback([rq, &action] { action = [rq] { return cb::run(*rq); }; });
}

}  // namespace cb
