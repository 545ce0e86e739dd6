// The run's choices as they concern the NCCL backend: --memory device is required, and --gpus
// applies to it alone.
#pragma once

#include "collectives/backends/backend_entry.hpp"

namespace cb::nccl {

void check_run_choices(const RunChoices& choices);

}  // namespace cb::nccl
