// Version lines: built with and without CUDA (the loader itself needs no CUDA).
#include <fmt/format.h>

#include "collectives/backends/nccl/cuda_device.hpp"
#include "collectives/backends/nccl/nccl_backend.hpp"
#include "collectives/backends/nccl/nccl_library.hpp"

namespace cb::nccl {

std::vector<std::string> version_lines(const std::string& nccl_library) {
  std::vector<std::string> lines;
  LoadResult r = try_load(nccl_library);
  if (r.library) {
    lines.push_back(fmt::format("NCCL: {} ({}){}", r.library->version.text(), r.library->path,
                                cuda::built_with_cuda() ? "" : "; this build has no nccl backend"));
  } else {
    lines.push_back("NCCL: not loaded: " + r.error);
  }
  lines.push_back("CUDA: " + cuda::summary());
  return lines;
}

}  // namespace cb::nccl
