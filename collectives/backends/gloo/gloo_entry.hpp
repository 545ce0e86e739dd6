// The gloo backend as the registry lists it (Gloo over TCP): its one line in registry.cpp.
#pragma once

#include "collectives/backends/backend_entry.hpp"

namespace cb {

BackendEntry gloo_entry();

}  // namespace cb
