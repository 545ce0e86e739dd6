// `commbench run`: flags -> a RunRequest -> jobs/run (the sweep once, or as fresh jobs).
#include "cmd/run.hpp"

#include <memory>

#include "cmd/subcommands.hpp"
#include "jobs/run.hpp"

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
  add_run_options(cmd, rq, [](const RunFlag&) { return true; });
}

void add_run_options(CLI::App* cmd, RunRequest& rq, const std::function<bool(const RunFlag&)>& keep,
                     const std::map<std::string, std::string>& help) {
  for (const auto& f : run_flags()) {
    if (!keep(f)) continue;
    auto it = help.find(f.long_name());
    const std::string& text = it == help.end() ? f.help : it->second;
    if (f.toggle) {
      cmd->add_flag(f.names, rq.*f.toggle, text);
    } else if (f.list) {
      cmd->add_option(f.names, rq.*f.list, text);
    } else {
      CLI::Option* o = cmd->add_option(f.names, f.text(rq), text);
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
