#include "collectives/backends/nccl/cuda_requirements.hpp"

#include <fmt/format.h>

namespace cb::cuda {

std::string version_text(int code) {
  return fmt::format("{}.{}", code / 1000, code % 1000 / 10);
}

int required_driver(int runtime) {
  return runtime / 1000 * 1000;
}

std::string insufficient_driver_reason(int driver, int runtime) {
  if (driver <= 0) return "";
  return fmt::format(
      "the CUDA driver is too old for this build (cudaErrorInsufficientDriver): the driver "
      "supports CUDA {}, this build's CUDA {} runtime needs a driver for CUDA {} or newer; "
      "update the driver or rebuild commbench with a CUDA toolkit no newer than {} (12.0 at "
      "least)",
      version_text(driver), version_text(runtime), version_text(required_driver(runtime)),
      version_text(driver));
}

}  // namespace cb::cuda
