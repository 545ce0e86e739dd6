// `plot` as work: result files drawn as one SVG chart of bandwidth or time against message size,
// a panel per collective, a series per backend/algorithm (and file, dtype... where they differ).
#pragma once

#include <string>
#include <vector>

#include "app/flags.hpp"

namespace cb {

struct PlotRequest {
  std::vector<std::string> results;
  std::string output;
  std::string metric = "busbw";
  std::string collective;
  std::string title;
};

const Flags<PlotRequest>& plot_flags();

// Checks every value, reads the files and writes the chart. Returns the exit code (0).
int plot(const PlotRequest& rq);

}  // namespace cb
