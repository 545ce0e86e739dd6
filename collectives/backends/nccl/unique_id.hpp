// The NCCL unique id every process's communicators start from: rank 0 makes it and the run's
// control channel carries it. Needs no GPU, so it is tested on any host.
#pragma once

#include <string>

#include "collectives/backend.hpp"
#include "collectives/backends/nccl/nccl_library.hpp"

namespace cb::nccl {

// "ncclInvalidUsage (invalid usage); NCCL says: <its last warning>".
std::string result_reason(const Functions& f, int result);

// Every process calls this together. When ncclGetUniqueId fails on rank 0, rank 0 sends its
// reason in place of the id, so every process throws the same runtime Error naming it at once
// instead of the others waiting for the watchdog.
UniqueId exchange_unique_id(const Functions& f, Control& control);

}  // namespace cb::nccl
