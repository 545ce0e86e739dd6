// `commbench version`: version's flag table -> app/version (what was built and which libraries
// this process finds at run time).
#include <memory>

#include "app/version.hpp"
#include "cmd/flags.hpp"
#include "cmd/subcommands.hpp"

namespace cb {

void register_version(CLI::App& app, Action& action) {
  auto rq = std::make_shared<VersionRequest>();
  CLI::App* v = app.add_subcommand("version", "version, build options and libraries found");
  add_flags(v, version_flags(), *rq);
  v->callback([rq, &action] { action = [rq] { return version(*rq); }; });
}

}  // namespace cb
