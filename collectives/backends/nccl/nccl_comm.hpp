// NCCL communicators as the runner sees them: one Communicator drives one NCCL communicator per
// GPU of this process (several with --gpus), issuing each collective on all of them inside one
// ncclGroupStart/End, as nccl-tests does. Communicators are blocking by default (the watchdog
// ends a hung call with ncclCommAbort from its thread); COMMBENCH_NCCL_BLOCKING=0 makes them
// non-blocking, and each call's ncclInProgress is then polled to completion.
// Inside a group only NCCL calls run (staging copies come before it), and an NCCL error there
// is recorded by NCCL itself, so ncclGroupEnd always closes the group without launching part of
// it. On any error every lane's communicator is aborted before the error is thrown: kernels
// waiting on a dead peer stop, and unwinding cannot block in cudaFree.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collectives/backend.hpp"
#include "collectives/backends/nccl/comm_registry.hpp"
#include "collectives/backends/nccl/cuda_device.hpp"
#include "collectives/backends/nccl/event_timer.hpp"
#include "collectives/backends/nccl/nccl_library.hpp"
#include "collectives/backends/nccl/p2p_plan.hpp"
#include "collectives/backends/nccl/tuning_capture.hpp"
#include "core/watchdog.hpp"

namespace cb::nccl {

// What a communicator needs from its backend.
struct CommSetup {
  const Library* lib = nullptr;
  std::shared_ptr<CommRegistry> registry;
  cuda::DeviceMemory* memory = nullptr;
  std::vector<int> devices;  // one NCCL rank per device
  int first_rank = 0;        // global rank of devices[0]
  int nranks = 1;            // all ranks of all processes
  Control* control = nullptr;
  bool blocking = true;  // COMMBENCH_NCCL_BLOCKING=0 makes them non-blocking
  TuningCapture* capture = nullptr;
  Watchdog* watchdog = nullptr;  // covers the extra call describe_choice() makes
  int graph_calls = 0;           // --cuda-graph N: timed issues launch a graph of N calls
};

class NcclCommunicator : public Communicator {
 public:
  // Creates the communicators (every process calls this together). On failure returns null and
  // sets `failure` to NCCL's reason and `code` to its ncclResult_t.
  static std::shared_ptr<NcclCommunicator> create(const CommSetup& setup, std::string algorithm,
                                                  std::string* failure, int* code);
  ~NcclCommunicator() override;

  int rank() const override { return s_.first_rank; }
  int size() const override { return s_.nranks; }
  int local_ranks() const override { return static_cast<int>(lanes_.size()); }
  CollectiveCall local_call(const CollectiveCall& call, int l) const override;
  void issue(const CollectiveCall& call) override;
  void complete() override;
  std::unique_ptr<IterationTimer> make_timer() override;
  std::string describe_choice() override;
  std::uint64_t calls_per_timed_issue() const override {
    return s_.graph_calls > 0 ? static_cast<std::uint64_t>(s_.graph_calls) : 1;
  }
  void abort() override;
  std::string skip_reason(const CollectiveCall& call) const override;

  // A one-element call of `c` on private buffers for each dtype and op; empty when NCCL runs
  // them all, else NCCL's reason for the first it rejects, with its ncclResult_t in `code` (the
  // communicator is then aborted).
  std::string probe(Collective c, const std::vector<DType>& dtypes,
                    const std::vector<ReduceOp>& ops, int* code);
  // Ends the NCCL communicators and frees their GPU memory (every process calls this together);
  // the object must not be used afterwards.
  void close();
  bool failed() const { return failed_; }
  const std::string& algorithm() const { return algorithm_; }

  // For a replayed step (nccl_step.hpp): each lane's device and stream, and `call` enqueued on
  // every lane's stream without waiting (errors thrown, the lanes aborted, as issue() does).
  std::vector<cuda::TimedStream> lane_streams() const;
  void enqueue_call(const CollectiveCall& call);

 private:
  struct Lane {
    int device = 0;
    Comm comm = nullptr;
    cudaStream_t stream = nullptr;
    void* small = nullptr;  // barrier and probe buffers
    void* stage = nullptr;  // in-place alltoall and sendrecv go through a copy here
    std::size_t stage_bytes = 0;
    cudaGraphExec_t graph = nullptr;  // --cuda-graph: graph_calls_ captured calls of graph_for_
    std::vector<P2pCall> alltoallv;   // the grouped sends and receives of blocks `alltoallv_id`
    std::uint64_t alltoallv_id = 0;
  };

  // The first NCCL error of a group of calls.
  struct Outcome {
    int result = 0;  // kSuccess
    std::string what;
  };
  friend class DeferredStartTimer;

  explicit NcclCommunicator(const CommSetup& setup, std::string algorithm);
  void init(std::string* failure, int* code);
  // Sizes the in-place stage and copies the input aside for `call`, outside any group; for
  // alltoallv, plans each lane's sends and receives when its blocks changed.
  void stage(const CollectiveCall& call);
  // Enqueues the call lane l gets from `call_for` on every lane in one group and waits for
  // non-blocking communicators to take it; returns the first error instead of throwing.
  Outcome submit(const std::function<CollectiveCall(std::size_t)>& call_for);
  // stage() and submit() for `call`; aborts the lanes and throws on an error.
  void run(const CollectiveCall& call);
  void enqueue(const CollectiveCall& call, Lane& lane, int rank, Outcome& out);
  // Notes rc (ncclInProgress for settle(), the first error in `out`); true when it succeeded.
  bool note(int rc, const char* what, Outcome& out);
  // Waits until NCCL has taken every outstanding call; returns the first error state.
  int settle(
      std::chrono::steady_clock::duration limit = std::chrono::steady_clock::duration::max());
  // Aborts every lane's communicator, then throws naming `what` and NCCL's reason.
  [[noreturn]] void fail(const std::string& what, int result);
  [[noreturn]] void fail_cuda(const std::string& what, cudaError_t e);
  void abort_lanes();
  // --cuda-graph: captures s_.graph_calls calls of `call` on every lane's stream into a graph
  // (once per call shape; `call` must have run once, so the stage is sized outside capture),
  // and launches them.
  void capture_graphs(const CollectiveCall& call);
  void launch_graphs();
  void release_graphs();
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
  bool closed_ = false;
  int last_error_ = 3;  // ncclInternalError until fail() sees NCCL's (or kCudaFailure)
  CollectiveCall last_{};
  // Set by a timer's start(): the next issue() first runs its call once untimed, then records
  // the start (so the first interval carries neither launch latency nor rank skew).
  std::function<void()> deferred_start_;
  bool timing_ = false;                      // between a timer's start() and stop()
  std::optional<CollectiveCall> graph_for_;  // the call the graphs hold
};

}  // namespace cb::nccl
