// `run`'s flags on a subcommand (run and tune share them), one registration per row of
// run_flags().
#pragma once

#include <CLI/CLI.hpp>

#include "app/run_request.hpp"

namespace cb {

void add_run_options(CLI::App* cmd, RunRequest& rq);

}  // namespace cb
