// --format table|json and --output FILE for subcommands that print one document (topo, probe).
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace cb {

struct DocumentOutput {
  std::string format = "table";
  std::string output;  // .json, or .txt for the tables
};

// The formats a document is written in (--format), and their --output extensions.
std::vector<std::string> document_formats();
std::vector<std::string> document_extensions();
// Validates both options before any work starts (a usage Error naming what is accepted).
void check_document_output(const DocumentOutput& out);
// Writes the document to stdout in --format and, atomically, to --output.
void emit_document(const DocumentOutput& out, const nlohmann::json& doc,
                   const std::function<void(std::ostream&)>& print_tables);

}  // namespace cb
