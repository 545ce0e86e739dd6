// `commbench list collectives|backends|algorithms|dtypes`: list's flag table -> app/list (what
// this build and machine offer).
#include "app/list.hpp"
#include "cmd/flags.hpp"

namespace cb {

void register_list(CLI::App& app, Action& action) {
  add_command(app, action, "list", "what this build and this machine offer", list_flags(), list);
}

}  // namespace cb
