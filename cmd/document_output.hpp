// The --format and --output flags of subcommands that print one document (topo, probe).
#pragma once

#include <CLI/CLI.hpp>

#include "report/format/document_output.hpp"

namespace cb {

void add_document_options(CLI::App* app, DocumentOutput& out);

}  // namespace cb
