// Every output format, one row each: its --format name, the --output extension that selects it,
// and whether it is written record by record. Each kind of document keeps its writers in a table
// of its own, one row per format that suits it, named as here: a run's records
// (format/writers.hpp), topo's and probe's documents (format/document_output.cpp), compare's and
// check's reports (compare/compare_output.hpp, check/check_output.hpp). Adding a format is one
// row here and a row in each of those tables it suits; no format name is compared anywhere else,
// and help texts list the names and extensions these tables give.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cb {

struct OutputFormat {
  std::string_view name;
  std::string_view extension;
  bool streamed;  // written record by record as cases finish (else whole at the end)
};

// clang-format off
inline constexpr OutputFormat kOutputFormats[] = {
//   name      extension       streamed
    {"table",  ".txt",         false},
    {"csv",    ".csv",         false},
    {"json",   ".json",        false},
    {"jsonl",  ".jsonl",       true},
    {"md",     ".md",          false},
    {"gbench", ".gbench.json", false},
};
// clang-format on

// The row of kOutputFormats called `name`, or null.
const OutputFormat* find_output_format(std::string_view name);

// For a table of writers whose rows name formats (`formats`, in the table's order): the index of
// the one called `name`, or of the one whose extension ends `path` (the longest match); npos
// when none does.
std::size_t format_index_named(const std::vector<std::string_view>& formats, std::string_view name);
std::size_t format_index_for_path(const std::vector<std::string_view>& formats,
                                  const std::string& path);
// Their extensions, in order.
std::vector<std::string> extensions_of(const std::vector<std::string_view>& formats);
// Usage Errors naming what `formats` accept: "unknown OPTION 'NAME': expected one of ...", and
// "cannot tell the format of output 'PATH' from its extension: expected one of ...".
[[noreturn]] void unknown_format(const std::vector<std::string_view>& formats,
                                 std::string_view name, std::string_view option);
[[noreturn]] void unknown_extension(const std::vector<std::string_view>& formats,
                                    const std::string& path);
// "a, b, c": the names or extensions a help text lists.
std::string listed(const std::vector<std::string>& items, std::string_view separator = ", ");

// A table of writers for the formats that suit one kind of document: rows with a `format` member
// naming a row of kOutputFormats, looked up by --format name and by --output extension.
template <class Row>
class FormatRows {
 public:
  template <std::size_t N>
  constexpr FormatRows(const Row (&rows)[N]) : rows_(rows, N) {}

  std::vector<std::string_view> formats() const {
    std::vector<std::string_view> out;
    for (const Row& r : rows_) out.push_back(r.format);
    return out;
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const Row& r : rows_) out.emplace_back(r.format);
    return out;
  }
  std::vector<std::string> extensions() const { return extensions_of(formats()); }
  const Row* find_named(std::string_view name) const {
    return at(format_index_named(formats(), name));
  }
  const Row* find_for_path(const std::string& path) const {
    return at(format_index_for_path(formats(), path));
  }
  // The row for --format `name`, or for --output `path`; else a usage Error naming the accepted.
  const Row& named(std::string_view name, std::string_view option = "--format") const {
    if (const Row* r = find_named(name)) return *r;
    unknown_format(formats(), name, option);
  }
  const Row& for_path(const std::string& path) const {
    if (const Row* r = find_for_path(path)) return *r;
    unknown_extension(formats(), path);
  }
  // The format a row writes.
  static const OutputFormat& format_of(const Row& r) { return *find_output_format(r.format); }

 private:
  const Row* at(std::size_t i) const { return i < rows_.size() ? &rows_[i] : nullptr; }
  std::span<const Row> rows_;
};

// Fails fast, before any work, when the directory of an output path does not exist or the path
// cannot be written (see check_output_file; `streamed` outputs are written in place).
void check_output_directory(const std::string& path, bool streamed = false);

}  // namespace cb
