#include "collectives/backends/nccl/unique_id.hpp"

#include <fmt/format.h>

#include <cstring>

#include "common/error.hpp"

namespace cb::nccl {

namespace {
// The first byte of rank 0's message says what follows: the id, or why there is none.
constexpr char kId = 'I', kFailure = 'E';
}  // namespace

std::string result_reason(const Functions& f, int result) {
  std::string text = fmt::format("{} ({})", result_name(result), f.GetErrorString(result));
  const char* last = f.GetLastError(nullptr);
  if (last && *last) text += fmt::format("; NCCL says: {}", last);
  return text;
}

UniqueId exchange_unique_id(const Functions& f, Control& control) {
  UniqueId id{};
  std::string mine;
  if (control.rank() == 0) {
    if (int rc = f.GetUniqueId(&id); rc != kSuccess) {
      mine =
          kFailure + fmt::format("NCCL ncclGetUniqueId failed on rank 0: {}", result_reason(f, rc));
    } else {
      mine = kId + std::string(id.internal, sizeof id.internal);
    }
  }
  const std::vector<std::string> all = control.allgather(mine);
  const std::string& first = all.empty() ? mine : all.front();
  if (!first.empty() && first.front() == kFailure) runtime_error("{}", first.substr(1));
  if (first.size() != 1 + sizeof id.internal || first.front() != kId) {
    runtime_error("NCCL unique id exchange through the control channel failed");
  }
  std::memcpy(id.internal, first.data() + 1, sizeof id.internal);
  return id;
}

}  // namespace cb::nccl
