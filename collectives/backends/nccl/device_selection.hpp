// Which of the visible CUDA devices a process drives. Needs no GPU, so it is tested on any host.
#pragma once

#include <vector>

namespace cb::cuda {

// The `count` devices a process with this node-local rank drives among `visible` devices:
// all of them when exactly `count` are visible (a launcher that binds GPUs per task, such as
// Slurm's --gpus-per-task or --gpu-bind, shows each task only its own), else devices
// local_rank * count onwards (one GPU per rank by default, as nccl-tests does). Throws a
// runtime Error when too few are visible.
std::vector<int> choose_devices(int local_rank, int count, int visible);

}  // namespace cb::cuda
