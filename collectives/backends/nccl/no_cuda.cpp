// Built when CMake found no CUDA toolkit (or -DCOMMBENCH_CUDA=OFF): the nccl backend stays
// listed and says why it cannot run; device memory is refused with the same reason.
#include "collectives/backends/nccl/cuda_device.hpp"
#include "collectives/backends/nccl/nccl_backend.hpp"
#include "collectives/backends/nccl/nccl_library.hpp"
#include "common/error.hpp"

namespace cb {

namespace {
constexpr const char* kWithoutCuda =
    "this commbench was built without CUDA (configure with the CUDA toolkit present)";
}

namespace cuda {

bool built_with_cuda() {
  return false;
}
std::string no_device_reason() {
  return kWithoutCuda;
}
std::vector<int> devices_for(int, int) {
  runtime_error("{}", kWithoutCuda);
}
std::string summary() {
  return "not built in (configured without the CUDA toolkit)";
}
int compute_major(int) {
  return 0;
}
std::unique_ptr<DeviceMemory> make_device_memory(std::vector<int>) {
  usage_error("--memory device is not available: {}", kWithoutCuda);
}

}  // namespace cuda

namespace nccl {

std::string unavailable_reason(const BackendOptions& o) {
  // A library the user named is still checked: bad input is a usage error in any build.
  if (LoadResult r = try_load(o.flag("--nccl-lib")); !r.library && r.kind == ErrorKind::Usage) {
    throw Error(r.kind, r.error);
  }
  return kWithoutCuda;
}
std::unique_ptr<Backend> make_backend(const BackendOptions&) {
  runtime_error("backend nccl cannot run here: {}", kWithoutCuda);
}
std::optional<PeerMessagesOffer> peer_messages() {
  return std::nullopt;
}

}  // namespace nccl

}  // namespace cb
