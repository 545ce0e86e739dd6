// How this process was started: by an MPI launcher (mpirun, mpiexec, srun), by commbench's own
// local launcher (`run -N`), or by itself.
#pragma once

#include <map>
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

// For a run's meta: "kind" (none, local, mpi or slurm) and, under srun, the job's shape as
// Slurm gives it to this rank (SLURM_JOB_ID, SLURM_STEP_ID, SLURM_NNODES, SLURM_NTASKS,
// SLURM_PROCID, SLURM_LOCALID, SLURM_NODEID, SLURM_JOB_NODELIST, SLURM_TASKS_PER_NODE, ...).
std::map<std::string, std::string> launcher_facts(const LaunchInfo& launch);

}  // namespace cb
