// Decisions about NCCL communicators that need no GPU, so they are tested on any host.
#pragma once

#include <string>

namespace cb::nccl {

// COMMBENCH_NCCL_BLOCKING: unset or "1" gives blocking communicators (the default: every call
// returns once enqueued, as nccl-tests runs them); "0" gives non-blocking ones, whose every call
// from NCCL 2.19 on ends in a group job on a new thread (10-30 us of host time per call, which
// shows in small-message latency). Anything else is a usage Error.
bool blocking_communicators(const char* value);

// Whether a forced algorithm's failed set-up or probe means NCCL does not accept the choice (the
// cases are skipped) rather than a fault (a run error): ncclUnhandledCudaError (out of device
// memory among others), ncclSystemError, ncclRemoteError and ncclTimeout are faults.
bool is_rejection(int result);

// Not an ncclResult_t: a CUDA runtime call failed (waiting for a probe's kernel, say). Never a
// rejection, whatever NCCL's last result was.
inline constexpr int kCudaFailure = -1;

// What a forced algorithm's failed set-up or probe (`stage`: "at communicator set-up", or empty)
// with `result` becomes: the cases' skip reason, "NCCL rejects it[ stage]: why", when NCCL
// refused the choice; otherwise a runtime Error with `why` (a fault, CUDA's or NCCL's).
// --cuda-graph N: calls captured in each CUDA graph (1 to 100000); 0 when not given. A usage
// Error otherwise.
int cuda_graph_calls(const std::string& flag);

std::string rejection_or_fault(int result, const std::string& stage, const std::string& why);

}  // namespace cb::nccl
