// `commbench compare BASE... NEW`: compare's flag table -> app/compare (match records, judge each
// change over repetitions or against threshold and noise, report; exit 5 on a regression).
#include <memory>

#include "app/compare.hpp"
#include "cmd/flags.hpp"
#include "cmd/subcommands.hpp"

namespace cb {

void register_compare(CLI::App& app, Action& action) {
  auto rq = std::make_shared<CompareRequest>();
  CLI::App* c = app.add_subcommand(
      "compare",
      "compare BASE... NEW result files; exit 5 on a credible regression, 6 when inconclusive");
  add_flags(c, compare_flags(), *rq);
  c->callback([rq, &action] { action = [rq] { return cb::compare(*rq); }; });
}

}  // namespace cb
