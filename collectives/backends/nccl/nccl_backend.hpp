// The NCCL backend (-B nccl): libnccl loaded at run time, device buffers, CUDA-event timing,
// validation on the GPU, forced NCCL_ALGO x NCCL_PROTO combinations and what NCCL chose by
// default. A build without CUDA keeps the entry points and reports that it lacks them.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collectives/backends/backend_entry.hpp"

namespace cb::nccl {

// Empty when NCCL loads and a CUDA device is visible, else why not. Throws a usage Error when
// the library the user named (--nccl-lib, COMMBENCH_NCCL_LIB) cannot be used.
std::string unavailable_reason(const BackendOptions& options);
std::unique_ptr<Backend> make_backend(const BackendOptions& options);
// Send/recv between the ranks' GPUs over NCCL's IB transport (probe links' NCCL passes); absent
// without CUDA.
std::optional<PeerMessagesOffer> peer_messages();

// For `commbench version`: "NCCL: 2.28.9 (/path/libnccl.so.2)" or why it does not load, and
// "CUDA: ..." (runtime, driver, devices).
std::vector<std::string> version_lines(const std::string& nccl_library);

}  // namespace cb::nccl
