#pragma once

#include <memory>

#include "collectives/backend.hpp"

namespace cb::mpi {

// The MPI backend over MPI_COMM_WORLD, its buffers in `memory` (device memory needs a
// CUDA-aware MPI, see mpi_cuda_aware.hpp); initialises MPI if needed.
std::unique_ptr<Backend> make_backend(std::unique_ptr<Memory> memory = make_host_memory());

}  // namespace cb::mpi
