#include "report/format/record_text.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace cb {

std::string format_bandwidth(const std::optional<double>& gbps) {
  return gbps ? fmt::format("{:.2f}", *gbps) : std::string("-");
}

std::string format_factor(const std::optional<double>& ratio) {
  return ratio ? fmt::format("{:.2f}", *ratio) : std::string("-");
}

std::string libraries_text(const RunMeta& meta) {
  std::string libs;
  for (const auto& [backend, lib] : meta.libraries) {
    libs += fmt::format("{}{}: {}", libs.empty() ? "" : ", ", backend, lib);
  }
  return libs.empty() ? "no backend" : libs;
}

std::string ranks_text(const RunMeta& meta) {
  return fmt::format("{} rank{} on {} node{}", meta.nranks, meta.nranks == 1 ? "" : "s",
                     meta.nnodes, meta.nnodes == 1 ? "" : "s");
}

std::string collective_label(const ResultRecord& r) {
  return r.split.empty() ? r.collective : r.collective + " " + r.split;
}

std::vector<std::string> collective_order(const std::vector<ResultRecord>& records) {
  std::vector<std::string> out;
  for (const auto& r : records) {
    const std::string label = collective_label(r);
    if (std::find(out.begin(), out.end(), label) == out.end()) out.push_back(label);
  }
  return out;
}

}  // namespace cb
