// `version` as work: what was built, and which libraries this process finds at run time (each
// backend's version lines, with the backends' flags that choose what they report).
#pragma once

#include <map>
#include <string>

#include "app/flags.hpp"

namespace cb {

struct VersionRequest {
  std::map<std::string, std::string> backend_flags;  // by long name
};

const Flags<VersionRequest>& version_flags();

int version(const VersionRequest& rq);

}  // namespace cb
