// NCCL communicators as the runner sees them: one Communicator drives one NCCL communicator per
// GPU of this process (several with --gpus), issuing each collective on all of them inside one
// ncclGroupStart/End, as nccl-tests does. Communicators are created non-blocking, so set-up and
// every call can be watched and aborted; each call's ncclInProgress is polled to completion.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "collectives/backend.hpp"
#include "collectives/nccl/cuda_device.hpp"
#include "collectives/nccl/event_timer.hpp"
#include "collectives/nccl/nccl_library.hpp"
#include "collectives/nccl/tuning_capture.hpp"
#include "collectives/watchdog.hpp"

namespace cb::nccl {

// Every live NCCL communicator of this process, so the watchdog can abort them from its thread.
class CommRegistry {
 public:
  explicit CommRegistry(CommFn abort) : abort_(abort) {}
  void add(Comm c);
  void remove(Comm c);
  // From the watchdog: stops the main thread from touching NCCL, aborts every communicator
  // (waiting at most `limit`, since an abort can itself hang on a dead peer), then returns.
  void abort_all(std::chrono::seconds limit);
  bool aborting() const { return aborting_.load(std::memory_order_relaxed); }
  // Parks the calling (main) thread while the watchdog aborts and exits.
  [[noreturn]] void park() const;

 private:
  CommFn abort_;
  std::timed_mutex mu_;
  std::vector<Comm> comms_;
  std::atomic<bool> aborting_{false};
};

// What a communicator needs from its backend.
struct CommSetup {
  const Library* lib = nullptr;
  std::shared_ptr<CommRegistry> registry;
  cuda::DeviceMemory* memory = nullptr;
  std::vector<int> devices;  // one NCCL rank per device
  int first_rank = 0;        // global rank of devices[0]
  int nranks = 1;            // all ranks of all processes
  Control* control = nullptr;
  bool blocking = false;  // COMMBENCH_NCCL_BLOCKING=1
  TuningCapture* capture = nullptr;
  Watchdog* watchdog = nullptr;  // covers the extra call describe_choice() makes
};

class NcclCommunicator : public Communicator {
 public:
  // Creates the communicators (every process calls this together). On failure returns null and
  // sets `failure` to NCCL's reason.
  static std::shared_ptr<NcclCommunicator> create(const CommSetup& setup, std::string algorithm,
                                                  std::string* failure);
  ~NcclCommunicator() override;

  int rank() const override { return s_.first_rank; }
  int size() const override { return s_.nranks; }
  int local_ranks() const override { return static_cast<int>(lanes_.size()); }
  CollectiveCall local_call(const CollectiveCall& call, int l) const override;
  void issue(const CollectiveCall& call) override;
  void complete() override;
  std::unique_ptr<IterationTimer> make_timer() override;
  std::string describe_choice() override;
  void abort() override;

  // A one-element call of `c` on private buffers for each dtype and op; empty when NCCL runs
  // them all, else NCCL's reason for the first it rejects (the communicator is then unusable).
  std::string probe(Collective c, const std::vector<DType>& dtypes,
                    const std::vector<ReduceOp>& ops);
  bool failed() const { return failed_; }
  const std::string& algorithm() const { return algorithm_; }

 private:
  struct Lane {
    int device = 0;
    Comm comm = nullptr;
    cudaStream_t stream = nullptr;
    void* small = nullptr;  // barrier and probe buffers
    void* stage = nullptr;  // in-place alltoall and sendrecv go through a copy here
    std::size_t stage_bytes = 0;
  };

  explicit NcclCommunicator(const CommSetup& setup, std::string algorithm);
  void init(std::string* failure);
  void enqueue(const CollectiveCall& call, Lane& lane, int rank);
  void* staged(Lane& lane, const void* src, std::size_t bytes);
  // Accepts ncclSuccess and ncclInProgress (noted for settle()), throws on anything else.
  void accept(int rc, const char* what);
  // Waits until NCCL has taken every outstanding call; returns the first error state.
  int settle(
      std::chrono::steady_clock::duration limit = std::chrono::steady_clock::duration::max());
  [[noreturn]] void fail(const std::string& what, int result);
  // "ncclInvalidUsage (invalid usage ...); NCCL says: <its last warning>".
  std::string reason(int result) const;
  void destroy();

  CommSetup s_;
  std::string algorithm_;
  std::vector<Lane> lanes_;
  std::shared_ptr<cuda::EventPool> events_;
  Config config_{};
  bool pending_ = false;
  bool failed_ = false;
  bool issued_ = false;
  CollectiveCall last_{};
};

}  // namespace cb::nccl
