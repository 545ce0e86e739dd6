// `commbench list collectives|backends|algorithms|dtypes`: list's flag table -> app/list (what
// this build and machine offer).
#include <memory>

#include "app/list.hpp"
#include "cmd/flags.hpp"
#include "cmd/subcommands.hpp"

namespace cb {

void register_list(CLI::App& app, Action& action) {
  auto rq = std::make_shared<ListRequest>();
  CLI::App* l = app.add_subcommand("list", "what this build and this machine offer");
  add_flags(l, list_flags(), *rq);
  l->callback([rq, &action] { action = [rq] { return list(*rq); }; });
}

}  // namespace cb
