// CUDA-aware MPI: MPI collectives on device buffers (--memory device with -B mpi), allowed only
// when the MPI library says it moves GPU memory itself.
#pragma once

#include <memory>
#include <string>

#include "collectives/backends/backend_entry.hpp"

namespace cb::mpi {

struct CudaSupport {
  bool supported = false;
  std::string how;  // what was asked and what it answered
};

// Open MPI: MPIX_Query_cuda_support() from mpi-ext.h. MPICH (4.0+):
// MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA). Others cannot say; COMMBENCH_MPI_CUDA_AWARE=1
// (or 0) overrides the answer for any library. Initialises MPI.
CudaSupport cuda_support();

// The same question before any rank exists, without initialising MPI (that would start a
// singleton): COMMBENCH_MPI_CUDA_AWARE, else Open MPI's build answer (MPIX_CUDA_AWARE_SUPPORT in
// mpi-ext.h). MPICH can only answer once initialised, so it counts as possibly CUDA-aware here
// and its ranks decide with cuda_support().
CudaSupport cuda_support_before_launch();

// Host memory, or with --memory device a buffer on this rank's GPU (node-local rank -> device).
// Throws a usage Error when the MPI library is not CUDA-aware.
std::unique_ptr<Memory> make_memory(const BackendOptions& options);

}  // namespace cb::mpi
