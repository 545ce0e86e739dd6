// How this process was started: by an MPI launcher (mpirun, mpiexec, srun), by commbench's own
// local launcher (`run -N`), by a launcher of the env:// convention (torchrun, Kubernetes; see
// env_launch.hpp), or by itself.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace cb {

struct LaunchInfo {
  enum class Kind { Single, Mpi, Local, Env } kind = Kind::Single;
  int rank = 0;  // from the launcher's environment, before any library is initialised
  int size = 1;
  int local_rank = 0;
  std::string store_dir;  // Local: the launcher's private rendezvous directory
  // Env: where rank 0 serves the rendezvous, and what is wrong with the variables (empty when
  // nothing; reported when the run's control channel starts, by every rank, exit 2).
  std::string master_addr;
  int master_port = 0;
  std::string env_problem;
};

// Environment the local launcher gives each rank it starts.
inline constexpr const char* kLocalRankEnv = "COMMBENCH_LOCAL_RANK";
inline constexpr const char* kLocalSizeEnv = "COMMBENCH_LOCAL_SIZE";
inline constexpr const char* kLocalStoreEnv = "COMMBENCH_LOCAL_STORE";

// Reads the local launcher's variables, then OMPI_COMM_WORLD_*, PMI_*, PMIX_RANK,
// MPI_LOCALRANKID, SLURM_* variables, then the env:// ones (RANK, WORLD_SIZE, MASTER_ADDR, ...).
// An MPI launcher wins over env:// variables it inherited. Never throws.
LaunchInfo detect_launch();

// For a run's meta: "kind" (none, local, mpi, slurm or env) and, under env://, the variables read
// (env_launch_variables);, under srun, the job's shape as
// Slurm gives it to this rank (SLURM_JOB_ID, SLURM_STEP_ID, SLURM_NNODES, SLURM_NTASKS,
// SLURM_PROCID, SLURM_LOCALID, SLURM_NODEID, SLURM_JOB_NODELIST, SLURM_TASKS_PER_NODE, ...).
std::map<std::string, std::string> launcher_facts(const LaunchInfo& launch);

}  // namespace cb
