#include "report/format/result_reader.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/error.hpp"
#include "report/format/writer.hpp"

namespace cb {

namespace {

using nlohmann::json;

constexpr const char* kAccepted =
    "expected a commbench result file (.json, .jsonl or .csv as written by `run --output`)";

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool blank(std::string_view text) {
  return text.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

// Re-throws a record-level error with the place it came from.
template <typename F>
auto with_place(const std::string& place, F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    usage_error("{}: {}", place, e.what());
  }
}

json parse_json(std::string_view text, const std::string& place) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    usage_error("{}: not valid JSON (truncated or corrupt near byte {}): {}", place, e.byte,
                kAccepted);
  }
}

ResultRecord record_from_json(const json& j, const std::string& place) {
  return with_place(place, [&] { return j.get<ResultRecord>(); });
}

// "PLACE: the run that wrote it ended with exit N (REASON)" from an incomplete mark.
std::string incomplete_mark(const json& j, const std::string& place) {
  auto code = j.find("exit_code");
  auto reason = j.find("reason");
  std::string text = fmt::format("{}: the run that wrote it failed", place);
  if (code != j.end() && code->is_number_integer()) {
    text += fmt::format(" with exit {}", code->get<int>());
  }
  if (reason != j.end() && reason->is_string() && !reason->get<std::string>().empty()) {
    text += fmt::format(" ({})", reason->get<std::string>());
  }
  return text;
}

void read_document(std::string_view text, ResultFile& file) {
  json doc = parse_json(text, file.path);
  if (!doc.is_object()) usage_error("{}: top level is not a JSON object: {}", file.path, kAccepted);
  auto schema = doc.find("schema");
  if (schema == doc.end() || !schema->is_string()) {
    usage_error("{}: no 'schema' field: {}", file.path, kAccepted);
  }
  if (schema->get<std::string>() != kResultSchema) {
    usage_error("{}: unknown schema '{}': this commbench reads {}", file.path,
                schema->get<std::string>(), kResultSchema);
  }
  auto results = doc.find("results");
  if (results == doc.end() || !results->is_array()) {
    usage_error("{}: no 'results' array in a {} document", file.path, kResultSchema);
  }
  if (auto meta = doc.find("meta"); meta != doc.end() && !meta->is_null()) {
    file.meta_json = *meta;
    file.meta = with_place(file.path, [&] { return meta->get<RunMeta>(); });
    if (!file.meta->incomplete.is_null()) {
      file.incomplete = incomplete_mark(file.meta->incomplete, "meta.incomplete");
    }
  }
  std::size_t index = 0;
  for (const auto& r : *results) {
    file.records.push_back(record_from_json(r, fmt::format("{}: result {}", file.path, index)));
    ++index;
  }
}

// Calls each(line) for every line of `text` (without its '\n'), in place: a result file of
// hundreds of megabytes is held once, not copied into a stream.
template <typename F>
void for_each_line(std::string_view text, F each) {
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    each(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
}

void read_lines(std::string_view text, ResultFile& file) {
  int number = 0;
  for_each_line(text, [&](std::string_view line) {
    ++number;
    if (blank(line)) return;
    std::string place = fmt::format("{}:{}", file.path, number);
    json j = parse_json(line, place);
    if (j.is_object() && j.contains(kIncompleteKey)) {
      file.incomplete = incomplete_mark(j, place);
      return;
    }
    if (j.is_object() && j.contains("schema")) {
      usage_error("{}: a JSON document where one record per line was expected: {}", place,
                  kAccepted);
    }
    file.records.push_back(record_from_json(j, place));
  });
}

void read_csv(std::string_view text, ResultFile& file) {
  int number = 0;
  bool header = false;
  for_each_line(text, [&](std::string_view line) {
    ++number;
    if (blank(line)) return;
    std::vector<std::string> fields = csv_split(line);
    if (!header) {
      if (!result_csv_header(fields)) {
        usage_error("{}:{}: not the commbench CSV header (it starts 'backend,library,...'): {}",
                    file.path, number, kAccepted);
      }
      header = true;
      return;
    }
    std::string place = fmt::format("{}:{}", file.path, number);
    file.records.push_back(record_from_fields(fields, place));
  });
}

std::string format_of(const std::string& path, std::string_view text) {
  if (ends_with(path, ".gbench.json")) {
    usage_error("{}: Google Benchmark output cannot be read back: {}", path, kAccepted);
  }
  if (ends_with(path, ".jsonl")) return "jsonl";
  if (ends_with(path, ".json")) return "json";
  if (ends_with(path, ".csv")) return "csv";
  // Unknown extension: tell by content.
  auto first = text.find_first_not_of(" \t\r\n");
  if (text[first] != '{') return "csv";
  auto newline = text.find('\n', first);
  bool one_line = newline == std::string_view::npos || blank(text.substr(newline));
  return one_line || text.find("\"schema\"") != std::string_view::npos ? "json" : "jsonl";
}

}  // namespace

ResultFile parse_result_text(std::string_view text, const std::string& path) {
  if (blank(text)) usage_error("{}: file is empty: {}", path, kAccepted);
  ResultFile file;
  file.path = path;
  file.format = format_of(path, text);
  if (file.format == "json") {
    read_document(text, file);
  } else if (file.format == "jsonl") {
    read_lines(text, file);
  } else {
    read_csv(text, file);
  }
  return file;
}

ResultFile read_result_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    usage_error("cannot read result file '{}': it is a directory", path);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) usage_error("cannot read result file '{}': {}", path, std::strerror(errno));
  // Straight into one string (a stream's buffer and its copy would hold the file twice).
  std::string text;
  char block[1 << 16];
  while (in.read(block, sizeof block) || in.gcount() > 0) text.append(block, in.gcount());
  if (in.bad()) usage_error("cannot read result file '{}': {}", path, std::strerror(errno));
  return parse_result_text(text, path);
}

void require_complete(const ResultFile& file, std::string_view what) {
  if (file.incomplete.empty()) return;
  usage_error("{}: incomplete results: {}; {} judges only whole runs: rerun it", file.path,
              file.incomplete, what);
}

std::vector<std::string> result_paths(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) return {path};
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(path, ec)) {
    std::string name = e.path().filename().string();
    if (!e.is_regular_file(ec) || ends_with(name, ".gbench.json")) continue;
    if (ends_with(name, ".json") || ends_with(name, ".jsonl") || ends_with(name, ".csv")) {
      out.push_back(e.path().string());
    }
  }
  if (ec) usage_error("cannot read directory '{}': {}", path, ec.message());
  if (out.empty()) {
    usage_error("directory '{}' holds no result files (.json, .jsonl or .csv)", path);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string file_label(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  for (const char* ext : {".jsonl", ".json", ".csv"}) {
    if (ends_with(name, ext) && name.size() > std::strlen(ext)) {
      return name.substr(0, name.size() - std::strlen(ext));
    }
  }
  return name;
}

}  // namespace cb
