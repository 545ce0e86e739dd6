// `commbench check SPEC [RESULTS...]`: check's flag table -> app/check (an acceptance spec
// against result files and the topology, from --topology FILE, else probed); exit 5 when an
// error-severity requirement fails.
#include <memory>

#include "app/check.hpp"
#include "cmd/flags.hpp"
#include "cmd/subcommands.hpp"

namespace cb {

void register_check(CLI::App& app, Action& action) {
  auto rq = std::make_shared<CheckRequest>();
  CLI::App* c = app.add_subcommand(
      "check", "evaluate an acceptance spec against results and topology; exit 5 on a failure");
  add_flags(c, check_flags(), *rq);
  c->callback([rq, &action] { action = [rq] { return check(*rq); }; });
}

}  // namespace cb
