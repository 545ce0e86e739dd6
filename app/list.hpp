// `list` as work: what this build and machine offer (collectives, backends, algorithms, dtypes).
#pragma once

#include <string>

#include "app/flags.hpp"

namespace cb {

struct ListRequest {
  std::string what;
  std::string backends;
  std::string collectives = "all";
};

const Flags<ListRequest>& list_flags();

// Prints the table asked for; a usage Error names what can be listed.
int list(const ListRequest& rq);

}  // namespace cb
