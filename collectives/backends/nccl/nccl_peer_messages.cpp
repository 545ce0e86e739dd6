// NCCL send/recv between two ranks' GPUs on NCCL's IB network, for `probe links` passes pinned to
// one HCA.
//
// Why one HCA per process: NCCL's IB transport (NVIDIA/nccl src/transport/net_ib.cc, split into
// src/transport/net_ib/init.cc from 2.28 on; ncclIbInit) builds its device list once per
// process: only while ncclNIbDevs == -1, under ncclIbLock, does it read NCCL_IB_HCA (getenv, later
// ncclGetEnv) and filter ibv_get_device_list() by it; every later communicator reuses that list.
// So a pass per HCA needs a fresh process per HCA, with NCCL_IB_HCA set before NCCL starts.
#include <cuda_runtime.h>

#include <exception>
#include <thread>

#include "collectives/backends/nccl/cuda_check.hpp"
#include "collectives/backends/nccl/cuda_device.hpp"
#include "collectives/backends/nccl/nccl_backend.hpp"
#include "collectives/backends/nccl/nccl_library.hpp"
#include "collectives/backends/nccl/unique_id.hpp"
#include "common/clock.hpp"
#include "common/error.hpp"

namespace cb::nccl {

namespace {

constexpr int kInt8 = 0;  // ncclInt8
// An NCCL operation that has not completed after this long is taken for a dead peer or link;
// the communicator is aborted (a time-bounded sample never waits this long on a live link).
constexpr double kStuckSeconds = 120;

class NcclPeerMessages : public PeerMessages {
 public:
  NcclPeerMessages(Control& control, int local_rank)
      : control_(control), lib_(nccl::load(std::string())) {
    if (!lib_.fn.Send || !lib_.fn.Recv)
      runtime_error("NCCL {} has no ncclSend/ncclRecv", lib_.path);
    device_ = cuda::devices_for(local_rank, 1).front();
    cuda::check(cudaSetDevice(device_), "cudaSetDevice");
    cuda::check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    cuda::check(cudaMalloc(&small_, 2 * kSmall), "cudaMalloc");
    UniqueId id = exchange_unique_id(lib_.fn, control_);
    Config config = make_config(lib_.code(), true);
    config.netName = "IB";  // the HCA's IB verbs transport, never a silent fall-back to sockets
    const int rc =
        lib_.fn.CommInitRankConfig(&comm_, control_.size(), id, control_.rank(), &config);
    if (rc != kSuccess) {
      comm_ = nullptr;
      runtime_error("NCCL could not make the links communicator on rank {}: {}", control_.rank(),
                    result_reason(lib_.fn, rc));
    }
  }

  ~NcclPeerMessages() override {
    // Unwinding (this rank or the control channel failed): a peer may be gone, and finalize
    // would wait for it, so the communicator is aborted.
    const bool clean = !failed_ && std::uncaught_exceptions() == 0;
    if (comm_ && clean) lib_.fn.CommFinalize(comm_);
    if (comm_) (clean ? lib_.fn.CommDestroy : lib_.fn.CommAbort)(comm_);
    if (buf_) cudaFree(buf_);
    if (small_) cudaFree(small_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  void reserve(std::uint64_t bytes) override {
    if (bytes <= buf_bytes_) return;
    if (buf_) cudaFree(buf_);
    buf_ = nullptr;
    cuda::check(cudaMalloc(&buf_, bytes), "cudaMalloc");
    buf_bytes_ = bytes;
  }

  void send(int peer, std::uint64_t count, std::uint64_t bytes) override {
    ok(lib_.fn.GroupStart(), "ncclGroupStart");
    for (std::uint64_t k = 0; k < count; ++k)
      ok(lib_.fn.Send(buf_, bytes, kInt8, peer, comm_, stream_), "ncclSend");
    ok(lib_.fn.GroupEnd(), "ncclGroupEnd");
  }

  void recv(int peer, std::uint64_t count, std::uint64_t bytes) override {
    ok(lib_.fn.GroupStart(), "ncclGroupStart");
    for (std::uint64_t k = 0; k < count; ++k)
      ok(lib_.fn.Recv(buf_, bytes, kInt8, peer, comm_, stream_), "ncclRecv");
    ok(lib_.fn.GroupEnd(), "ncclGroupEnd");
  }

  void send_word(int peer) override {
    ok(lib_.fn.Send(static_cast<char*>(small_) + kSmall, kSmall, kInt8, peer, comm_, stream_),
       "ncclSend");
  }

  void recv_word(int peer) override {
    ok(lib_.fn.Recv(small_, kSmall, kInt8, peer, comm_, stream_), "ncclRecv");
  }

  // Waits for everything queued on the stream, without blocking forever on a dead peer.
  void wait(const char* what) override {
    const auto t0 = std::chrono::steady_clock::now();
    for (;;) {
      const cudaError_t e = cudaStreamQuery(stream_);
      if (e == cudaSuccess) return;
      if (e != cudaErrorNotReady) {
        failed_ = true;
        cuda::check(e, what);
      }
      int async = kSuccess;
      if (lib_.fn.CommGetAsyncError(comm_, &async) == kSuccess && async != kSuccess &&
          async != kInProgress)
        ok(async, what);
      if (seconds_since(t0) > kStuckSeconds) {
        failed_ = true;
        runtime_error(
            "NCCL {} on rank {} did not complete within {:g} s: the peer or the link is "
            "gone",
            what, control_.rank(), kStuckSeconds);
      }
      std::this_thread::yield();
    }
  }

 private:
  static constexpr std::size_t kSmall = 8;

  void ok(int rc, const char* what) {
    if (rc == kSuccess) return;
    failed_ = true;
    runtime_error("NCCL {} failed on rank {}: {}", what, control_.rank(),
                  result_reason(lib_.fn, rc));
  }

  Control& control_;
  const Library& lib_;
  int device_ = 0;
  Comm comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  void* buf_ = nullptr;
  std::uint64_t buf_bytes_ = 0;
  void* small_ = nullptr;  // [0, 8): a word in; [8, 16): a word out
  bool failed_ = false;
};

}  // namespace

std::optional<PeerMessagesOffer> peer_messages() {
  return PeerMessagesOffer{cuda::no_device_reason,
                           [](Control& control, int local_rank) -> std::unique_ptr<PeerMessages> {
                             return std::make_unique<NcclPeerMessages>(control, local_rank);
                           }};
}

}  // namespace cb::nccl
