#include "report/report_format.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <utility>

#include "common/error.hpp"
#include "common/output_path.hpp"

namespace cb {

namespace {

constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kExtensions = {{
    {".txt", "table"},
    {".csv", "csv"},
    {".json", "json"},
    {".md", "md"},
}};

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

bool accepts(const std::vector<std::string>& accepted, std::string_view f) {
  return std::find(accepted.begin(), accepted.end(), f) != accepted.end();
}

}  // namespace

void check_report_format(std::string_view format, const std::vector<std::string>& accepted,
                         std::string_view option) {
  if (!accepts(accepted, format)) {
    usage_error("unknown {} '{}': expected one of {}", option, format, join(accepted));
  }
}

std::string report_format_for_path(const std::string& path,
                                   const std::vector<std::string>& accepted) {
  std::vector<std::string> extensions;
  for (const auto& [ext, format] : kExtensions) {
    if (!accepts(accepted, format)) continue;
    extensions.emplace_back(ext);
    if (path.size() > ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0) {
      return std::string(format);
    }
  }
  usage_error("cannot tell the format of output '{}' from its extension: expected one of {}", path,
              join(extensions));
}

void check_output_directory(const std::string& path, bool streamed) {
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty() && !std::filesystem::is_directory(parent)) {
    usage_error("cannot write output '{}': directory '{}' does not exist", path, parent.string());
  }
  check_output_file(path, streamed);
}

}  // namespace cb
