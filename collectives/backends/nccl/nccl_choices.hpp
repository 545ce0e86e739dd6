// The run's choices as they concern the NCCL backend: --memory device is required, --gpus applies
// to it alone, and its device memory makes -e default to 1 GiB.
#pragma once

#include "collectives/engine/plan.hpp"
#include "collectives/backends/registry.hpp"

namespace cb::nccl {

void apply_run_choices(const RunChoices& choices, SweepOptions& sweep);

}  // namespace cb::nccl
