#include "report/format/document_output.hpp"

#include <iostream>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "report/format/report_format.hpp"

namespace cb {

namespace {

void write_document_json(const nlohmann::json& doc, const std::function<void(std::ostream&)>&,
                         std::ostream& out) {
  out << doc.dump(2) << "\n";
}

void write_document_tables(const nlohmann::json&,
                           const std::function<void(std::ostream&)>& print_tables,
                           std::ostream& out) {
  print_tables(out);
}

// topo's and probe's documents: the JSON, or the tables `print_tables` prints for people.
struct DocumentWriter {
  std::string_view format;
  void (*write)(const nlohmann::json& doc, const std::function<void(std::ostream&)>& print_tables,
                std::ostream& out);
};

// clang-format off
constexpr DocumentWriter kDocumentWriters[] = {
    {"table", write_document_tables},
    {"json",  write_document_json},
};
// clang-format on
constexpr FormatRows<DocumentWriter> kDocumentFormats{kDocumentWriters};

std::string render(const DocumentWriter& writer, const nlohmann::json& doc,
                   const std::function<void(std::ostream&)>& print_tables) {
  std::ostringstream out;
  writer.write(doc, print_tables, out);
  return out.str();
}

const DocumentWriter& file_format(const std::string& path) {
  const DocumentWriter* w = kDocumentFormats.find_for_path(path);
  if (!w) {
    std::string names;
    for (const auto& ext : kDocumentFormats.extensions()) {
      names += (names.empty() ? "a " : " or ") + ext;
    }
    usage_error("invalid --output '{}': expected {} file name", path, names);
  }
  return *w;
}

const DocumentWriter& stdout_format(const std::string& name) {
  if (const DocumentWriter* w = kDocumentFormats.find_named(name)) return *w;
  usage_error("invalid --format '{}': expected {}", name, listed(kDocumentFormats.names(), " or "));
}

}  // namespace

std::vector<std::string> document_formats() {
  return kDocumentFormats.names();
}

std::vector<std::string> document_extensions() {
  return kDocumentFormats.extensions();
}

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
