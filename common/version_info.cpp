#include "common/version_info.hpp"

#ifndef COMMBENCH_VERSION
#define COMMBENCH_VERSION "0.0.0"
#endif
#include "git_commit.h"  // generated at build time
#ifndef COMMBENCH_BUILD_OPTIONS
#define COMMBENCH_BUILD_OPTIONS ""
#endif

namespace cb {

std::string commbench_version() {
  return COMMBENCH_VERSION;
}
std::string commbench_git_commit() {
  return COMMBENCH_GIT_COMMIT;
}
std::string build_options() {
  return COMMBENCH_BUILD_OPTIONS;
}

}  // namespace cb
