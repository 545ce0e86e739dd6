// How this process was started: by an MPI launcher (mpirun, mpiexec, srun), by commbench's own
// local launcher (`run -N`), or by itself.
#pragma once

#include <optional>
#include <string>

namespace cb {

struct LaunchInfo {
  enum class Kind { Single, Mpi, Local } kind = Kind::Single;
  int rank = 0;  // from the launcher's environment, before any library is initialised
  int size = 1;
  int local_rank = 0;
  std::string store_dir;  // Local: the launcher's private rendezvous directory
};

// Environment the local launcher gives each rank it starts.
inline constexpr const char* kLocalRankEnv = "COMMBENCH_LOCAL_RANK";
inline constexpr const char* kLocalSizeEnv = "COMMBENCH_LOCAL_SIZE";
inline constexpr const char* kLocalStoreEnv = "COMMBENCH_LOCAL_STORE";

// Reads the local launcher's variables, then OMPI_COMM_WORLD_*, PMI_*, PMIX_RANK,
// MPI_LOCALRANKID, SLURM_* variables.
LaunchInfo detect_launch();

}  // namespace cb
