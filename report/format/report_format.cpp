#include "report/format/report_format.hpp"

#include <fmt/ranges.h>

#include <filesystem>

#include "common/error.hpp"
#include "common/output_path.hpp"

namespace cb {

const OutputFormat* find_output_format(std::string_view name) {
  for (const auto& f : kOutputFormats) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::size_t format_index_named(const std::vector<std::string_view>& formats,
                               std::string_view name) {
  for (std::size_t i = 0; i < formats.size(); ++i) {
    if (formats[i] == name) return i;
  }
  return std::string::npos;
}

std::size_t format_index_for_path(const std::vector<std::string_view>& formats,
                                  const std::string& path) {
  // Longest match first so ".gbench.json"-style compound extensions can win over ".json".
  std::size_t best = std::string::npos, best_size = 0;
  for (std::size_t i = 0; i < formats.size(); ++i) {
    const std::string_view ext = find_output_format(formats[i])->extension;
    if (path.size() > ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0 &&
        (best == std::string::npos || ext.size() > best_size)) {
      best = i;
      best_size = ext.size();
    }
  }
  return best;
}

std::vector<std::string> extensions_of(const std::vector<std::string_view>& formats) {
  std::vector<std::string> out;
  for (auto name : formats) out.emplace_back(find_output_format(name)->extension);
  return out;
}

std::string listed(const std::vector<std::string>& items, std::string_view separator) {
  return fmt::format("{}", fmt::join(items, separator));
}

void unknown_format(const std::vector<std::string_view>& formats, std::string_view name,
                    std::string_view option) {
  std::vector<std::string> names(formats.begin(), formats.end());
  usage_error("unknown {} '{}': expected one of {}", option, name, listed(names));
}

void unknown_extension(const std::vector<std::string_view>& formats, const std::string& path) {
  usage_error("cannot tell the format of output '{}' from its extension: expected one of {}", path,
              listed(extensions_of(formats)));
}

void check_output_directory(const std::string& path, bool streamed) {
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty() && !std::filesystem::is_directory(parent)) {
    usage_error("cannot write output '{}': directory '{}' does not exist", path, parent.string());
  }
  check_output_file(path, streamed);
}

}  // namespace cb
