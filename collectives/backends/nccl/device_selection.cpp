#include "collectives/backends/nccl/device_selection.hpp"

#include "common/error.hpp"

namespace cb::cuda {

std::vector<int> choose_devices(int local_rank, int count, int visible) {
  const int first = visible == count ? 0 : local_rank * count;
  if (first + count > visible) {
    runtime_error(
        "node-local rank {} needs GPUs {}..{} ({} per process) but {} {} visible; use fewer "
        "ranks per node or a smaller --gpus, or bind {} GPU{} to each task",
        local_rank, first, first + count - 1, count, visible, visible == 1 ? "is" : "are", count,
        count == 1 ? "" : "s");
  }
  std::vector<int> out;
  for (int i = 0; i < count; ++i) out.push_back(first + i);
  return out;
}

}  // namespace cb::cuda
