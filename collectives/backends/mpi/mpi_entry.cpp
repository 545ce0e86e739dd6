// The mpi backend's registry entry.
#include "collectives/backends/mpi/mpi_entry.hpp"

#include "collectives/backends/mpi/mpi_backend.hpp"
#include "collectives/backends/mpi/mpi_cuda_aware.hpp"
#include "collectives/backends/mpi/mpi_runtime.hpp"
#include "collectives/backends/mpi/mpi_tuning.hpp"

namespace cb {

BackendEntry mpi_entry() {
  return {.name = "mpi",
          .description = "MPI collectives on host memory (device memory with a CUDA-aware MPI)",
          .unavailable_reason =
              [](const BackendOptions& o) {
                // MPI_Init would make each rank a world of its own.
                return o.launch.kind == LaunchInfo::Kind::Env
                           ? std::string(
                                 "an env:// launcher (torchrun, Kubernetes), not an MPI "
                                 "launcher, started these ranks: use -B gloo (or nccl)")
                           : std::string();
              },
          .create = [](const BackendOptions& o) { return mpi::make_backend(mpi::make_memory(o)); },
          .version_lines = [](const BackendOptions&) { return mpi::version_lines(); },
          .needs_mpi_launcher = true,
          .library_name = "the MPI",
          .device_support =
              [](const LaunchInfo& launch) {
                const mpi::CudaSupport s = launch.kind == LaunchInfo::Kind::Single
                                               ? mpi::cuda_support_before_launch()
                                               : mpi::cuda_support();
                return DeviceSupport{s.supported, s.how};
              },
          .roof = RoofModel::HostMemory,
          .tuning_files = {{"--emit-ompi-rules",
                            "write an Open MPI coll/tuned dynamic rules file for the mpi results",
                            mpi::ompi_rules_file}},
          .launcher_control = mpi::make_control};
}

}  // namespace cb
