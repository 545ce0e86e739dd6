// Builds without the CUDA toolkit: the probe exists and says why it cannot run.
#include "probes/gpu_copy.hpp"

namespace cb {

GpuCopyResult run_gpu_copy(const GpuCopyOptions&) {
  GpuCopyResult r;
  r.error = "no CUDA device is visible (this commbench was built without CUDA)";
  return r;
}

}  // namespace cb
