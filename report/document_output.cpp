#include "report/document_output.hpp"

#include <iostream>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/error.hpp"

namespace cb {

namespace {

std::string output_format(const std::string& path) {
  auto dot = path.rfind('.');
  std::string ext = dot == std::string::npos ? "" : path.substr(dot);
  if (ext == ".json") return "json";
  if (ext == ".txt") return "table";
  usage_error("invalid --output '{}': expected a .json or .txt file name", path);
}

std::string render(const std::string& format, const nlohmann::json& doc,
                   const std::function<void(std::ostream&)>& print_tables) {
  std::ostringstream out;
  if (format == "json") {
    out << doc.dump(2) << "\n";
  } else {
    print_tables(out);
  }
  return out.str();
}

}  // namespace

void check_document_output(const DocumentOutput& out) {
  if (out.format != "table" && out.format != "json") {
    usage_error("invalid --format '{}': expected table or json", out.format);
  }
  if (!out.output.empty()) output_format(out.output);
}

void emit_document(const DocumentOutput& out, const nlohmann::json& doc,
                   const std::function<void(std::ostream&)>& print_tables) {
  if (!out.output.empty()) {
    write_file_atomically(out.output, render(output_format(out.output), doc, print_tables));
  }
  std::cout << render(out.format, doc, print_tables) << std::flush;
}

}  // namespace cb
