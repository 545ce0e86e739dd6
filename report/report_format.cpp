#include "report/report_format.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <utility>

#include "common/error.hpp"
#include "common/output_path.hpp"

namespace cb {

namespace {

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

bool accepts(const std::vector<std::string>& accepted, std::string_view f) {
  return accepted.empty() || std::find(accepted.begin(), accepted.end(), f) != accepted.end();
}

}  // namespace

const OutputFormat* output_format_for_path(const std::string& path,
                                           const std::vector<std::string>& accepted) {
  // Longest match first so ".gbench.json"-style compound extensions can win over ".json".
  const OutputFormat* best = nullptr;
  for (const auto& f : kOutputFormats) {
    const auto& ext = f.extension;
    if (accepts(accepted, f.name) && path.size() > ext.size() &&
        path.compare(path.size() - ext.size(), ext.size(), ext) == 0 &&
        (!best || ext.size() > best->extension.size())) {
      best = &f;
    }
  }
  return best;
}

std::vector<std::string> output_extensions(const std::vector<std::string>& accepted) {
  std::vector<std::string> out;
  for (const auto& f : kOutputFormats) {
    if (accepts(accepted, f.name)) out.emplace_back(f.extension);
  }
  return out;
}

void check_report_format(std::string_view format, const std::vector<std::string>& accepted,
                         std::string_view option) {
  if (!accepts(accepted, format)) {
    usage_error("unknown {} '{}': expected one of {}", option, format, join(accepted));
  }
}

std::string report_format_for_path(const std::string& path,
                                   const std::vector<std::string>& accepted) {
  if (const OutputFormat* f = output_format_for_path(path, accepted)) return std::string(f->name);
  usage_error("cannot tell the format of output '{}' from its extension: expected one of {}", path,
              join(output_extensions(accepted)));
}

void check_output_directory(const std::string& path, bool streamed) {
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty() && !std::filesystem::is_directory(parent)) {
    usage_error("cannot write output '{}': directory '{}' does not exist", path, parent.string());
  }
  check_output_file(path, streamed);
}

}  // namespace cb
