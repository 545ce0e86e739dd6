// Compute as the GPU sees it, for replayed steps: a kernel of one block per SM that spins on the
// GPU's global timer (nanoseconds) for the given time. Its blocks occupy SM slots that
// communication kernels then share, so compute and communication contend on the device as they
// do in training.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace cb::cuda {

// Enqueues a spin of `ns` nanoseconds on `stream` over `blocks` blocks.
void launch_spin(std::uint64_t ns, int blocks, cudaStream_t stream);

}  // namespace cb::cuda
