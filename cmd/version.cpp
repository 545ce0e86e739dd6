// `commbench version`: version's flag table -> app/version (what was built and which libraries
// this process finds at run time).
#include "app/version.hpp"
#include "cmd/flags.hpp"

namespace cb {

void register_version(CLI::App& app, Action& action) {
  add_command(app, action, "version", "version, build options and libraries found", version_flags(),
              version);
}

}  // namespace cb
