// Decisions about NCCL communicators that need no GPU, so they are tested on any host.
#pragma once

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

}  // namespace cb::nccl
