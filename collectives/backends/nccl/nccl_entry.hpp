// The nccl backend as the registry lists it (NCCL on GPUs): its one line in registry.cpp.
#pragma once

#include "collectives/backends/backend_entry.hpp"

namespace cb {

BackendEntry nccl_entry();

}  // namespace cb
