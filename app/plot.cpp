#include "app/plot.hpp"

#include <fmt/format.h>

#include <iostream>

#include "collectives/catalogue/catalogue.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/file_identity.hpp"
#include "common/stop_line.hpp"
#include "report/format/report_format.hpp"
#include "report/plot/svg_plot.hpp"

namespace cb {

namespace {

PlotOptions validate(const PlotRequest& rq) {
  PlotOptions o;
  if (rq.metric == "busbw") {
    o.metric = PlotMetric::Busbw;
  } else if (rq.metric == "algbw") {
    o.metric = PlotMetric::Algbw;
  } else if (rq.metric == "time") {
    o.metric = PlotMetric::Time;
  } else {
    usage_error("invalid --metric '{}': expected busbw, algbw or time", rq.metric);
  }
  if (!rq.collective.empty()) {
    auto c = parse_collective(rq.collective);
    if (!c) {
      std::string names;
      for (const auto& i : all_collectives())
        names += (names.empty() ? "" : ", ") + std::string(i.name);
      usage_error("unknown --collective '{}': expected one of {}", rq.collective, names);
    }
    o.collective = std::string(name(*c));
  }
  o.title = rq.title;
  const std::string ext = ".svg";
  if (rq.output.size() <= ext.size() ||
      rq.output.compare(rq.output.size() - ext.size(), ext.size(), ext) != 0) {
    usage_error("invalid --output '{}': plot writes SVG, expected a name ending in .svg",
                rq.output);
  }
  check_output_directory(rq.output);
  std::vector<NamedFile> inputs;
  for (const auto& path : rq.results) inputs.push_back({"RESULTS", path});
  check_distinct_files({{"--output", rq.output}}, inputs);
  return o;
}

}  // namespace

const Flags<PlotRequest>& plot_flags() {
  using P = PlotRequest;
  static const Flags<P> flags = {
      required(list_flag("RESULTS", &P::results,
                         "result files (.json, .jsonl, .csv) from `run --output`")),
      required(value_flag("-o,--output", &P::output, "the chart to write (FILE.svg)")),
      value_flag("--metric", &P::metric, "busbw, algbw or time (default busbw)"),
      value_flag("--collective", &P::collective,
                 "plot only this collective (default: a panel each)"),
      value_flag("--title", &P::title, "chart title (default: from the results' metadata)"),
  };
  return flags;
}

int plot(const PlotRequest& rq) {
  end_with_one_line_on_stop("plot");
  PlotOptions options = validate(rq);
  std::vector<ResultFile> files;
  for (const auto& path : rq.results) files.push_back(read_result_file(path));
  Plot plot = render_plot(files, options);
  for (const auto& n : plot.notes) std::cerr << "commbench: note: " << n << "\n";
  write_file_atomically(rq.output, plot.svg);
  return 0;
}

}  // namespace cb
