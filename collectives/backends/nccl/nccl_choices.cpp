#include "collectives/backends/nccl/nccl_choices.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace cb::nccl {

void check_run_choices(const RunChoices& c) {
  const bool nccl = std::find(c.backends.begin(), c.backends.end(), "nccl") != c.backends.end();
  if (nccl && c.memory == MemoryKind::Host && c.memory_given) {
    usage_error("the nccl backend needs --memory device (its buffers live on the GPU)");
  }
  if (c.gpus > 1 && (!nccl || c.backends.size() > 1)) {
    usage_error("--gpus {} applies to the nccl backend only: use -B nccl", c.gpus);
  }
}

}  // namespace cb::nccl
