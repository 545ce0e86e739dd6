#include "collectives/backends/nccl/nccl_policy.hpp"

#include <string_view>

#include "collectives/backends/nccl/nccl_abi.hpp"
#include "common/error.hpp"

namespace cb::nccl {

bool blocking_communicators(const char* value) {
  if (!value) return true;
  const std::string_view v(value);
  if (v == "1") return true;
  if (v == "0") return false;
  usage_error(
      "COMMBENCH_NCCL_BLOCKING must be 1 (blocking communicators, the default) or 0 "
      "(non-blocking), not '{}'",
      v);
}

bool is_rejection(int result) {
  return result == kInternalError || result == kInvalidArgument || result == kInvalidUsage;
}

}  // namespace cb::nccl
