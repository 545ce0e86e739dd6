#include "report/format/document_output.hpp"

#include <iostream>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "report/format/report_format.hpp"

namespace cb {

namespace {

std::string render(const OutputFormat& format, const nlohmann::json& doc,
                   const std::function<void(std::ostream&)>& print_tables) {
  std::ostringstream out;
  format.document(doc, print_tables, out);
  return out.str();
}

const OutputFormat& file_format(const std::string& path) {
  const OutputFormat* f = find_format_for_path(path, Writes::Document);
  if (!f) {
    std::string names;
    for (const auto& ext : format_extensions(Writes::Document)) {
      names += (names.empty() ? "a " : " or ") + ext;
    }
    usage_error("invalid --output '{}': expected {} file name", path, names);
  }
  return *f;
}

const OutputFormat& stdout_format(const std::string& name) {
  if (const OutputFormat* f = find_format_named(name, Writes::Document)) return *f;
  std::string names;
  for (const auto& n : format_names(Writes::Document)) names += (names.empty() ? "" : " or ") + n;
  usage_error("invalid --format '{}': expected {}", name, names);
}

}  // namespace

void check_document_output(const DocumentOutput& out) {
  stdout_format(out.format);
  if (!out.output.empty()) file_format(out.output);
}

void emit_document(const DocumentOutput& out, const nlohmann::json& doc,
                   const std::function<void(std::ostream&)>& print_tables) {
  if (!out.output.empty()) {
    write_file_atomically(out.output, render(file_format(out.output), doc, print_tables));
  }
  std::cout << render(stdout_format(out.format), doc, print_tables) << std::flush;
}

}  // namespace cb
