// `commbench check SPEC [RESULTS...]`: check's flag table -> app/check (an acceptance spec
// against result files and the topology, from --topology FILE, else probed); exit 5 when an
// error-severity requirement fails.
#include "app/check.hpp"
#include "cmd/flags.hpp"

namespace cb {

void register_check(CLI::App& app, Action& action) {
  add_command(app, action, "check",
              "evaluate an acceptance spec against results and topology; exit 5 on a failure",
              check_flags(), check);
}

}  // namespace cb
