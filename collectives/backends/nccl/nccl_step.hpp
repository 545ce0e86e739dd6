// A replayed step on the GPU: compute as spin kernels on a compute stream of each GPU, each
// collective enqueued on its communicator's stream behind an event recorded where its gradients
// become ready, the compute stream waiting on a collective's end event where the program waits,
// and every time read from CUDA events (as PyTorch's DDP and FSDP order their streams).
#pragma once

#include <memory>

#include "collectives/step_driver.hpp"

namespace cb::nccl {

std::unique_ptr<StepDriver> make_nccl_step_driver();

}  // namespace cb::nccl
