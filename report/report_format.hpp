// Formats of subcommand reports (compare, check): chosen by --format for stdout and by the
// extension for --output FILE.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "report/writer.hpp"

namespace cb {

// Every output format: its --format name and the --output extension that selects it.
// Subcommand reports (compare, check) accept a subset and write them their own way; a run's
// results are written by `make`.
struct OutputFormat {
  std::string_view name;
  std::string_view extension;
  std::unique_ptr<Writer> (*make)(std::ostream&);
};
// clang-format off
inline constexpr OutputFormat kOutputFormats[] = {
    {"table",  ".txt",         make_table_writer},
    {"csv",    ".csv",         make_csv_writer},
    {"json",   ".json",        make_json_writer},
    {"jsonl",  ".jsonl",       make_jsonl_writer},
    {"md",     ".md",          make_markdown_writer},
    {"gbench", ".gbench.json", make_gbench_writer},
};
// clang-format on

// The format of `path` by its longest matching extension among `accepted` format names (all
// when empty), or null.
const OutputFormat* output_format_for_path(const std::string& path,
                                           const std::vector<std::string>& accepted = {});
// The extensions of `accepted` (all when empty), in table order.
std::vector<std::string> output_extensions(const std::vector<std::string>& accepted = {});

// Checks `format` is one of `accepted`; throws a usage Error naming them otherwise.
void check_report_format(std::string_view format, const std::vector<std::string>& accepted,
                         std::string_view option = "--format");

// The format for an output path: .txt table, .csv csv, .json json, .md md, restricted to
// `accepted`. Throws a usage Error naming the accepted extensions.
std::string report_format_for_path(const std::string& path,
                                   const std::vector<std::string>& accepted);

// Fails fast, before any work, when the directory of an output path does not exist or the path
// cannot be written (see check_output_file; `streamed` outputs are written in place).
void check_output_directory(const std::string& path, bool streamed = false);

}  // namespace cb
