#include "cmd/document_output.hpp"

namespace cb {

void add_document_options(CLI::App* app, DocumentOutput& out) {
  app->add_option("--format", out.format, "stdout format: table or json (default table)");
  app->add_option("--output", out.output, "also write FILE (.json, or .txt for the tables)");
}

}  // namespace cb
