// Formats of subcommand reports (compare, check): chosen by --format for stdout and by the
// extension for --output FILE.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cb {

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
