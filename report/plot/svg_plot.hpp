// Charts of bandwidth or time against message size as a self-contained SVG document: one panel
// per collective in a grid, one series per backend/algorithm (and file, dtype... where those
// differ), a shared legend and a title from the run's metadata.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/format/result_reader.hpp"

namespace cb {

enum class PlotMetric { Busbw, Algbw, Time };

struct PlotOptions {
  PlotMetric metric = PlotMetric::Busbw;
  std::optional<std::string> collective;  // one panel for this collective only
  std::string title;                      // empty: from the files' metadata
};

struct Plot {
  std::string svg;
  std::vector<std::string> notes;  // what was left out and why
};

// Throws a usage Error when nothing can be plotted (no records, unknown collective).
Plot render_plot(const std::vector<ResultFile>& files, const PlotOptions& options);

}  // namespace cb
