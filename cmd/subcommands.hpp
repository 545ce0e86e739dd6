// Each subcommand registers its options on the app and, when chosen, sets `action`.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace cb {

using Action = std::function<int()>;

void register_run(CLI::App& app, Action& action);
void register_tune(CLI::App& app, Action& action);
void register_replay(CLI::App& app, Action& action);
void register_list(CLI::App& app, Action& action);
void register_version(CLI::App& app, Action& action);
void register_topo(CLI::App& app, Action& action);
void register_probe(CLI::App& app, Action& action);
void register_compare(CLI::App& app, Action& action);
void register_check(CLI::App& app, Action& action);
void register_plot(CLI::App& app, Action& action);

}  // namespace cb
