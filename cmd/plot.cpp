// `commbench plot RESULTS... -o FILE.svg`: plot's flag table -> app/plot (bandwidth or time
// against message size, one panel per collective, one series per backend/algorithm/file).
#include "app/plot.hpp"
#include "cmd/flags.hpp"

namespace cb {

void register_plot(CLI::App& app, Action& action) {
  add_command(app, action, "plot", "charts of bandwidth or time against message size", plot_flags(),
              plot);
}

}  // namespace cb
