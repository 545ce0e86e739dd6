#include "core/process_start.hpp"

#include <cstdlib>
#include <initializer_list>

#include "core/env_launch.hpp"

namespace cb {

namespace {

std::optional<int> env_int(std::initializer_list<const char*> names) {
  for (const char* n : names) {
    if (const char* v = std::getenv(n); v && *v) return std::atoi(v);
  }
  return std::nullopt;
}

// torchrun, Kubernetes: no MPI launcher, the env:// variables.
LaunchInfo env_launch(LaunchInfo li) {
  if (!env_launch_requested(process_env)) return li;
  EnvLaunch env;
  li.kind = LaunchInfo::Kind::Env;
  li.env_problem = read_env_launch(process_env, env);
  li.master_addr = env.master_addr;  // also with a problem: the process tells rank 0 of it
  li.master_port = env.master_port;
  if (!li.env_problem.empty()) return li;
  li.rank = env.rank;
  li.size = env.world_size;
  li.local_rank = env.local_rank;
  return li;
}

}  // namespace

LaunchInfo detect_launch() {
  LaunchInfo li;
  if (const char* store = std::getenv(kLocalStoreEnv); store && *store) {
    li.kind = LaunchInfo::Kind::Local;
    li.rank = env_int({kLocalRankEnv}).value_or(0);
    li.size = env_int({kLocalSizeEnv}).value_or(1);
    li.local_rank = li.rank;
    li.store_dir = store;
    return li;
  }
  auto size = env_int({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"});
  auto rank = env_int({"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"});
  // srun's PMIx plugin sets PMIX_RANK but no size variable: the step's task count is the size.
  if (rank && !size && std::getenv("SLURM_STEP_ID"))
    size = env_int({"SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"});
  if (!size && !rank) {
    // srun without an MPI-aware environment still says who we are.
    size = env_int({"SLURM_NTASKS"});
    rank = env_int({"SLURM_PROCID"});
    if (!(size && rank && std::getenv("SLURM_STEP_ID"))) return env_launch(li);
  }
  li.kind = LaunchInfo::Kind::Mpi;
  li.rank = rank.value_or(0);
  li.size = size.value_or(1);
  li.local_rank =
      env_int({"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PMI_LOCAL_RANK", "SLURM_LOCALID"})
          .value_or(0);
  return li;
}

std::map<std::string, std::string> launcher_facts(const LaunchInfo& launch) {
  static constexpr const char* kSlurm[] = {"SLURM_JOB_ID",
                                           "SLURM_STEP_ID",
                                           "SLURM_CLUSTER_NAME",
                                           "SLURM_JOB_PARTITION",
                                           "SLURM_NNODES",
                                           "SLURM_NTASKS",
                                           "SLURM_PROCID",
                                           "SLURM_LOCALID",
                                           "SLURM_NODEID",
                                           "SLURM_JOB_NODELIST",
                                           "SLURM_STEP_NODELIST",
                                           "SLURM_TASKS_PER_NODE",
                                           "SLURM_STEP_TASKS_PER_NODE",
                                           "SLURM_CPUS_PER_TASK",
                                           "SLURM_MPI_TYPE"};
  std::map<std::string, std::string> out;
  const bool slurm = std::getenv("SLURM_STEP_ID") && launch.kind == LaunchInfo::Kind::Mpi;
  out["kind"] = launch.kind == LaunchInfo::Kind::Local ? "local"
                : slurm                                ? "slurm"
                : launch.kind == LaunchInfo::Kind::Mpi ? "mpi"
                : launch.kind == LaunchInfo::Kind::Env ? "env"
                                                       : "none";
  if (launch.kind == LaunchInfo::Kind::Env) {
    for (auto& [name, value] : env_launch_variables(process_env)) out[name] = value;
    out["rendezvous_port"] = std::to_string(launch.master_port);
  }
  if (slurm) {
    for (const char* name : kSlurm)
      if (const char* v = std::getenv(name); v && *v) out[name] = v;
  }
  return out;
}

}  // namespace cb
