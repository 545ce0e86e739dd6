// CUDA devices and device memory, for the NCCL backend and for CUDA-aware MPI. Builds without
// the CUDA toolkit keep these entry points and report that GPU support is absent.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collectives/backend.hpp"

namespace cb::cuda {

bool built_with_cuda();
// Empty when at least one CUDA device is visible, else one line saying why none is.
std::string no_device_reason();
// The `count` devices a process with this node-local rank drives (choose_devices() among the
// visible ones). Throws a runtime Error when too few are visible.
std::vector<int> devices_for(int local_rank, int count);
// "runtime 13.0 (linked statically), driver 13.0, 1 device: NVIDIA H100 80GB HBM3 (compute
// capability 9.0)" or why there are none.
std::string summary();
// Compute capability major version of `device` (9 for sm90).
int compute_major(int device);

// Device memory on `devices`: allocate() returns a buffer on the first, mirrored by one of the
// same size on each of the others (several GPUs per process). Fill, poison and the validation
// count run on the GPU that holds the pointer.
class DeviceMemory : public Memory {
 public:
  // Where `p` (a pointer into a buffer on the first device) lies on local device `l`.
  virtual void* mirror(const void* p, int l) const = 0;
  virtual const std::vector<int>& devices() const = 0;
};
std::unique_ptr<DeviceMemory> make_device_memory(std::vector<int> devices);

}  // namespace cb::cuda
