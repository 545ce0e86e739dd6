// `run`'s flags on a subcommand (run and tune share them), one registration per row of
// run_flags().
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <map>
#include <string>

#include "collectives/engine/run_request.hpp"

namespace cb {

void add_run_options(CLI::App* cmd, RunRequest& rq);
// Only the rows `keep` accepts, each with the help `help` gives its long name where it gives
// one (a subcommand that takes some of run's flags: replay).
void add_run_options(CLI::App* cmd, RunRequest& rq, const std::function<bool(const RunFlag&)>& keep,
                     const std::map<std::string, std::string>& help = {});

}  // namespace cb
