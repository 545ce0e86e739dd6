#include "collectives/backends/nccl/nccl_policy.hpp"

#include <charconv>
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

int cuda_graph_calls(const std::string& flag) {
  if (flag.empty()) return 0;
  int n = 0;
  const auto [end, ec] = std::from_chars(flag.data(), flag.data() + flag.size(), n);
  if (ec != std::errc() || end != flag.data() + flag.size() || n < 1 || n > 100000) {
    usage_error("--cuda-graph must be a number of calls from 1 to 100000, not '{}'", flag);
  }
  return n;
}

std::string rejection_or_fault(int result, const std::string& stage, const std::string& why) {
  if (result == kCudaFailure) runtime_error("{}", why);
  if (!is_rejection(result)) runtime_error("NCCL {}", why);
  return "NCCL rejects it" + (stage.empty() ? "" : " " + stage) + ": " + why;
}

}  // namespace cb::nccl
