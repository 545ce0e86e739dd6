// `commbench plot RESULTS... -o FILE.svg`: plot's flag table -> app/plot (bandwidth or time
// against message size, one panel per collective, one series per backend/algorithm/file).
#include <memory>

#include "app/plot.hpp"
#include "cmd/flags.hpp"
#include "cmd/subcommands.hpp"

namespace cb {

void register_plot(CLI::App& app, Action& action) {
  auto rq = std::make_shared<PlotRequest>();
  CLI::App* p = app.add_subcommand("plot", "charts of bandwidth or time against message size");
  add_flags(p, plot_flags(), *rq);
  p->callback([rq, &action] { action = [rq] { return cb::plot(*rq); }; });
}

}  // namespace cb
