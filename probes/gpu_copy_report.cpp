#include "probes/gpu_copy_report.hpp"

#include <fmt/format.h>

#include <ostream>

#include "common/error.hpp"
#include "common/schema.hpp"
#include "common/text_table.hpp"
#include "common/units.hpp"

namespace cb {

namespace {

nlohmann::json opt(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}
std::string cell(const std::optional<double>& v) {
  return v ? fmt::format("{:.2f}", *v) : "N/A";
}

}  // namespace

GpuCopyResult measure_gpu_copy(const GpuCopyOptions& options) {
  GpuCopyResult r = run_gpu_copy(options);
  if (!r.error.empty()) runtime_error("{}", r.error);
  return r;
}

nlohmann::json gpu_copy_to_json(const GpuCopyResult& r, const GpuCopyOptions& options) {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& d : r.devices) {
    devices.push_back({{"index", d.index},
                       {"name", d.name},
                       {"bdf", d.bdf},
                       {"h2d_pinned_GBps", opt(d.h2d_pinned)},
                       {"h2d_pageable_GBps", opt(d.h2d_pageable)},
                       {"d2h_pinned_GBps", opt(d.d2h_pinned)},
                       {"d2h_pageable_GBps", opt(d.d2h_pageable)},
                       {"d2d_GBps", opt(d.d2d)}});
  }
  nlohmann::json p2p = nlohmann::json::array();
  for (const auto& row : r.p2p) {
    nlohmann::json jr = nlohmann::json::array();
    for (const auto& v : row) jr.push_back(opt(v));
    p2p.push_back(jr);
  }
  return {{"schema", kGpuCopySchema},   {"runtime", r.runtime}, {"bytes", options.bytes},
          {"repeats", options.repeats}, {"devices", devices},   {"p2p_GBps", p2p}};
}

void print_gpu_copy(const GpuCopyResult& r, const GpuCopyOptions& options, std::ostream& out) {
  out << fmt::format(
      "GPU copy-engine bandwidth, GB/s (1 GB = 1e9 bytes), {} per copy, median of {} ({})\n",
      format_size(options.bytes), options.repeats, r.runtime);
  TextTable t;
  t.set_header(
      {"gpu", "bdf", "name", "H2D pinned", "H2D pageable", "D2H pinned", "D2H pageable", "D2D"},
      {TextTable::Align::Left, TextTable::Align::Left, TextTable::Align::Left});
  for (const auto& d : r.devices) {
    t.add_row({std::to_string(d.index), d.bdf, d.name, cell(d.h2d_pinned), cell(d.h2d_pageable),
               cell(d.d2h_pinned), cell(d.d2h_pageable), cell(d.d2d)});
  }
  t.print(out, "  ");
  if (r.p2p.empty()) return;
  out << "\nPeer-to-peer writes, GB/s (row: source GPU, column: destination; N/A: no peer "
         "access)\n";
  TextTable p;
  std::vector<std::string> header{"src \\ dst"};
  for (std::size_t j = 0; j < r.p2p.size(); ++j) header.push_back(std::to_string(j));
  p.set_header(header);
  for (std::size_t i = 0; i < r.p2p.size(); ++i) {
    std::vector<std::string> row{std::to_string(i)};
    for (std::size_t j = 0; j < r.p2p.size(); ++j) row.push_back(i == j ? "-" : cell(r.p2p[i][j]));
    p.add_row(row);
  }
  p.print(out, "  ");
}

}  // namespace cb
