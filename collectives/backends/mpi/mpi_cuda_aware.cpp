#include "collectives/backends/mpi/mpi_cuda_aware.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <optional>

#include "collectives/backends/mpi/mpi_runtime.hpp"
#include "collectives/backends/nccl/cuda_device.hpp"
#include "common/error.hpp"

#if defined(OPEN_MPI) && __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

namespace cb::mpi {

namespace {

// COMMBENCH_MPI_CUDA_AWARE=1 (or 0), the user's answer for any library, when set.
std::optional<CudaSupport> user_answer() {
  const char* v = std::getenv("COMMBENCH_MPI_CUDA_AWARE");
  if (!v || !*v) return std::nullopt;
  return CudaSupport{std::string(v) == "1", fmt::format("COMMBENCH_MPI_CUDA_AWARE={}", v)};
}

}  // namespace

CudaSupport cuda_support() {
  ensure_initialized();
  if (auto answer = user_answer()) return *answer;
#if defined(OMPI_HAVE_MPI_EXT_CUDA) && OMPI_HAVE_MPI_EXT_CUDA
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  const char* built = "built with CUDA support";
#else
  const char* built = "built without CUDA support";
#endif
  const int runtime = MPIX_Query_cuda_support();
  return {runtime == 1, fmt::format("MPIX_Query_cuda_support() = {}, {}", runtime, built)};
#elif defined(MPICH_NUMVERSION) && defined(MPIX_GPU_SUPPORT_CUDA)
  int supported = 0;
  MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &supported);
  return {supported != 0,
          fmt::format("MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA) = {}", supported)};
#else
  return {false, "this MPI offers no query for CUDA support"};
#endif
}

CudaSupport cuda_support_before_launch() {
  if (auto answer = user_answer()) return *answer;
#if defined(OMPI_HAVE_MPI_EXT_CUDA) && OMPI_HAVE_MPI_EXT_CUDA && \
    defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return {true, "Open MPI built with CUDA support"};
#elif defined(OPEN_MPI)
  return {false, "Open MPI built without CUDA support"};
#elif defined(MPICH_NUMVERSION) && defined(MPIX_GPU_SUPPORT_CUDA)
  return {true, "MPICH answers once its ranks start"};
#else
  return {false, "this MPI offers no query for CUDA support"};
#endif
}

std::unique_ptr<Memory> make_memory(const BackendOptions& o) {
  if (o.memory == MemoryKind::Host) return make_host_memory();
  CudaSupport s = cuda_support();
  if (!s.supported) {
    usage_error(
        "--memory device with -B mpi needs a CUDA-aware MPI, and {} reports no CUDA support "
        "({}); set COMMBENCH_MPI_CUDA_AWARE=1 if it has it",
        library_version(), s.how);
  }
  return cuda::make_device_memory(cuda::devices_for(o.launch.local_rank, 1));
}

}  // namespace cb::mpi
