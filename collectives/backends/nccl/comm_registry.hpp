// Every live NCCL communicator of this process, so the watchdog can abort them from its thread
// without racing the main thread. The main thread holds use() around each NCCL call on a
// communicator (and each poll of its state); abort_all() waits for that to be released before
// it aborts, so a communicator is never freed between the main thread's check and its call.
// Once aborting, use() parks the main thread instead of returning, and the watchdog exits.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "collectives/backends/nccl/nccl_abi.hpp"

namespace cb::nccl {

// Made with std::make_shared (the abort runs on a helper thread that keeps it alive).
class CommRegistry : public std::enable_shared_from_this<CommRegistry> {
 public:
  // `park` never returns (the default sleeps forever); tests pass one that throws.
  explicit CommRegistry(CommFn abort, std::function<void()> park = {});

  // `idle` says whether the communicator's streams have finished their work; the abort waits
  // for it, since ncclCommAbort on a non-blocking communicator returns before the kernels stop.
  void add(Comm c, std::function<bool()> idle = {});
  void remove(Comm c);

  // Held by the main thread while it calls NCCL; parks it when the watchdog is aborting.
  [[nodiscard]] std::unique_lock<std::recursive_timed_mutex> use();

  // From the watchdog: stops the main thread from starting another NCCL call, waits up to half
  // of `limit` for the one in progress (an NCCL call blocked on a dead peer ends only by an
  // abort, so after that it aborts anyway), aborts every communicator, then waits for their
  // streams to go idle until `limit` is spent.
  void abort_all(std::chrono::milliseconds limit);
  bool aborting() const { return aborting_.load(); }
  // Parks the calling (main) thread while the watchdog aborts and exits.
  [[noreturn]] void park() const;

 private:
  struct Entry {
    Comm comm;
    std::function<bool()> idle;
  };
  CommFn abort_;
  std::function<void()> park_;
  // One NCCL call at a time: the main thread's or the abort (recursive: an error path aborts
  // while a call still holds it).
  std::recursive_timed_mutex use_mu_;
  std::mutex list_mu_;
  std::vector<Entry> comms_;
  std::atomic<bool> aborting_{false};
};

}  // namespace cb::nccl
