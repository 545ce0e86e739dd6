#include "report/report_format.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>

#include "common/error.hpp"
#include "common/output_path.hpp"

namespace cb {

namespace {

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

void write_document_json(const nlohmann::json& doc, const std::function<void(std::ostream&)>&,
                         std::ostream& out) {
  out << doc.dump(2) << "\n";
}

void write_document_tables(const nlohmann::json&,
                           const std::function<void(std::ostream&)>& print_tables,
                           std::ostream& out) {
  print_tables(out);
}

bool writes(const OutputFormat& f, Writes what) {
  switch (what) {
    case Writes::Results:
      return f.results != nullptr;
    case Writes::Compare:
      return f.compare != nullptr;
    case Writes::Check:
      return f.check != nullptr;
    case Writes::Document:
      return f.document != nullptr;
    case Writes::Replay:
      return f.replay != nullptr;
  }
  return false;
}

std::vector<std::string> format_names(Writes what) {
  std::vector<std::string> out;
  for (const auto& f : kOutputFormats) {
    if (writes(f, what)) out.emplace_back(f.name);
  }
  return out;
}

const OutputFormat* find_format_named(std::string_view name, Writes what) {
  for (const auto& f : kOutputFormats) {
    if (f.name == name && writes(f, what)) return &f;
  }
  return nullptr;
}

const OutputFormat& format_named(std::string_view name, Writes what, std::string_view option) {
  if (const OutputFormat* f = find_format_named(name, what)) return *f;
  usage_error("unknown {} '{}': expected one of {}", option, name, join(format_names(what)));
}

const OutputFormat* find_format_for_path(const std::string& path, Writes what) {
  // Longest match first so ".gbench.json"-style compound extensions can win over ".json".
  const OutputFormat* best = nullptr;
  for (const auto& f : kOutputFormats) {
    const auto& ext = f.extension;
    if (writes(f, what) && path.size() > ext.size() &&
        path.compare(path.size() - ext.size(), ext.size(), ext) == 0 &&
        (!best || ext.size() > best->extension.size())) {
      best = &f;
    }
  }
  return best;
}

std::vector<std::string> format_extensions(Writes what) {
  std::vector<std::string> out;
  for (const auto& f : kOutputFormats) {
    if (writes(f, what)) out.emplace_back(f.extension);
  }
  return out;
}

const OutputFormat& format_for_path(const std::string& path, Writes what) {
  if (const OutputFormat* f = find_format_for_path(path, what)) return *f;
  usage_error("cannot tell the format of output '{}' from its extension: expected one of {}", path,
              join(format_extensions(what)));
}

void check_output_directory(const std::string& path, bool streamed) {
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty() && !std::filesystem::is_directory(parent)) {
    usage_error("cannot write output '{}': directory '{}' does not exist", path, parent.string());
  }
  check_output_file(path, streamed);
}

}  // namespace cb
