// `commbench compare BASE... NEW`: compare's flag table -> app/compare (match records, judge each
// change over repetitions or against threshold and noise, report; exit 5 on a regression).
#include "app/compare.hpp"
#include "cmd/flags.hpp"

namespace cb {

void register_compare(CLI::App& app, Action& action) {
  add_command(
      app, action, "compare",
      "compare BASE... NEW result files; exit 5 on a credible regression, 6 when inconclusive",
      compare_flags(), compare);
}

}  // namespace cb
