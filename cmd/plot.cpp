// `commbench plot RESULTS... -o FILE.svg`: bandwidth or time against message size, one panel per
// collective, one series per backend/algorithm/file.
#include <fmt/format.h>

#include <iostream>

#include "cmd/subcommands.hpp"
#include "collectives/catalogue/catalogue.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/file_identity.hpp"
#include "common/stop_line.hpp"
#include "report/report_format.hpp"
#include "report/svg_plot.hpp"

namespace cb {

namespace {

struct PlotRequest {
  std::vector<std::string> results;
  std::string output;
  std::string metric = "busbw";
  std::string collective;
  std::string title;
};

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

int execute(const PlotRequest& rq) {
  end_with_one_line_on_stop("plot");
  PlotOptions options = validate(rq);
  std::vector<ResultFile> files;
  for (const auto& path : rq.results) files.push_back(read_result_file(path));
  Plot plot = render_plot(files, options);
  for (const auto& n : plot.notes) std::cerr << "commbench: note: " << n << "\n";
  write_file_atomically(rq.output, plot.svg);
  return 0;
}

}  // namespace

void register_plot(CLI::App& app, Action& action) {
  auto rq = std::make_shared<PlotRequest>();
  CLI::App* p = app.add_subcommand("plot", "charts of bandwidth or time against message size");
  p->add_option("RESULTS", rq->results, "result files (.json, .jsonl, .csv) from `run --output`")
      ->required();
  p->add_option("-o,--output", rq->output, "the chart to write (FILE.svg)")->required();
  p->add_option("--metric", rq->metric, "busbw, algbw or time (default busbw)");
  p->add_option("--collective", rq->collective,
                "plot only this collective (default: a panel each)");
  p->add_option("--title", rq->title, "chart title (default: from the results' metadata)");
  p->callback([rq, &action] { action = [rq] { return execute(*rq); }; });
}

}  // namespace cb
