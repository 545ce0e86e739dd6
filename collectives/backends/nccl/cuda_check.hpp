// CUDA runtime error handling: one line naming the call, the device and CUDA's message.
#pragma once

#include <cuda_runtime.h>

#include <string>

namespace cb::cuda {

// "out of memory (cudaErrorMemoryAllocation)".
std::string error_text(cudaError_t e);
// Throws a runtime Error naming `what` unless e is cudaSuccess.
void check(cudaError_t e, const char* what);

// Makes `device` current for the scope and restores the previous one.
class DeviceScope {
 public:
  explicit DeviceScope(int device);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = -1;
};

}  // namespace cb::cuda
