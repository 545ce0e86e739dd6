// Starting a run's ranks when no launcher did, and the control channel each rank uses.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/control.hpp"
#include "core/process_start.hpp"
#include "launch/plan_fingerprint.hpp"

namespace cb {

// -N's default: one rank per visible GPU, else 2.
int default_local_ranks();
// GPUs visible to this process: CUDA_VISIBLE_DEVICES when set, else /proc/driver/nvidia/gpus.
int visible_gpu_count();

// Whether ranks for `backends` can be started by the local launcher (a backend offers its
// control channel, Gloo's), or need the MPI launcher (an MPI backend, or no such backend).
bool needs_mpi_launcher(const std::vector<std::string>& backends);

// Starts `nranks` ranks of this very command: under the build's MPI launcher or with the local
// launcher, both as children, and shows their progress as `progress_mode` (--progress) asks.
// Returns the run's exit code.
int start_ranks(const std::vector<std::string>& backends, int nranks,
                const std::string& progress_mode);

// Reports what is wrong with this process's env:// variables (usage error, after telling rank 0
// so that the whole job ends at once); nothing for other launches.
void check_launch(const LaunchInfo& launch, double timeout_seconds);

// The control channel for a rank: MPI under mpirun/srun, the registry's local control (Gloo over
// the launcher's file store) under the local launcher, its rendezvous control (Gloo over the
// env:// rendezvous at MASTER_ADDR:MASTER_PORT) under torchrun or Kubernetes, where every rank
// must run `plan` (the ranks of the other launchers run one command line). Calls check_launch
// first.
std::unique_ptr<Control> make_run_control(const LaunchInfo& launch, double timeout_seconds,
                                          const PlanFingerprint& plan);

}  // namespace cb
