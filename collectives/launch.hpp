// How this process was started: by an MPI launcher (mpirun, mpiexec, srun) or by itself.
#pragma once

#include <optional>
#include <string>

namespace cb {

struct LaunchInfo {
  enum class Kind { Single, Mpi } kind = Kind::Single;
  int rank = 0;  // from the launcher's environment, before any library is initialised
  int size = 1;
  int local_rank = 0;
};

// Reads OMPI_COMM_WORLD_*, PMI_*, PMIX_RANK, MPI_LOCALRANKID, SLURM_* variables.
LaunchInfo detect_launch();

}  // namespace cb
