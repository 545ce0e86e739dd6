// What this build needs from the CUDA driver, in words. The CUDA runtime is linked statically,
// so the driver must support the toolkit's major version (CUDA 13 needs driver R580 or newer;
// any CUDA 12 runtime runs on a CUDA 12.0 driver or newer). Needs no GPU.
#pragma once

#include <string>

namespace cb::cuda {

// "12.8" for the CUDA version code 12080.
std::string version_text(int code);
// The oldest driver CUDA version a runtime of version `runtime` accepts (its major version).
int required_driver(int runtime);
// Why cudaGetDeviceCount said cudaErrorInsufficientDriver: the driver's and the build's CUDA
// versions, and what to do. Empty when no driver is installed at all (driver 0), which CUDA
// reports with the same error.
std::string insufficient_driver_reason(int driver, int runtime);

}  // namespace cb::cuda
