// `probe links` over NCCL send/recv between the two ranks' GPUs, for a pass pinned to one HCA.
//
// Why one HCA per process: NCCL's IB transport (NVIDIA/nccl src/transport/net_ib.cc, split into
// src/transport/net_ib/init.cc from 2.28 on; ncclIbInit) builds its device list once per
// process: only while ncclNIbDevs == -1, under ncclIbLock, does it read NCCL_IB_HCA (getenv, later
// ncclGetEnv) and filter ibv_get_device_list() by it; every later communicator reuses that list.
// So a pass per HCA needs a fresh process per HCA, with NCCL_IB_HCA set before NCCL starts.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <thread>

#include "collectives/backends/nccl/cuda_check.hpp"
#include "collectives/backends/nccl/cuda_device.hpp"
#include "collectives/backends/nccl/nccl_library.hpp"
#include "collectives/backends/nccl/unique_id.hpp"
#include "common/clock.hpp"
#include "common/error.hpp"
#include "common/median.hpp"
#include "probes/links_transport.hpp"

namespace cb {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kInt8 = 0;  // ncclInt8
// An NCCL operation that has not completed after this long is taken for a dead peer or link;
// the communicator is aborted (a time-bounded sample never waits this long on a live link).
constexpr double kStuckSeconds = 120;
// Latency round trips announced to the echoing side at a time (it queues them all on its GPU).
constexpr int kPingChunk = 10;

struct Header {
  std::uint32_t count = 0;  // messages (round trips for latency); 0 ends the sample
  std::uint32_t bytes = 0;  // each
};

class NcclTransport : public PairTransport {
 public:
  NcclTransport(Control& control, int local_rank)
      : control_(control), lib_(nccl::load(std::string())) {
    if (!lib_.fn.Send || !lib_.fn.Recv)
      runtime_error("NCCL {} has no ncclSend/ncclRecv", lib_.path);
    device_ = cuda::devices_for(local_rank, 1).front();
    cuda::check(cudaSetDevice(device_), "cudaSetDevice");
    cuda::check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    cuda::check(cudaMalloc(&small_, 2 * kSmall), "cudaMalloc");
    nccl::UniqueId id = nccl::exchange_unique_id(lib_.fn, control_);
    nccl::Config config = nccl::make_config(lib_.code(), true);
    config.netName = "IB";  // the HCA's IB verbs transport, never a silent fall-back to sockets
    const int rc =
        lib_.fn.CommInitRankConfig(&comm_, control_.size(), id, control_.rank(), &config);
    if (rc != nccl::kSuccess) {
      comm_ = nullptr;
      runtime_error("NCCL could not make the links communicator on rank {}: {}", control_.rank(),
                    nccl::result_reason(lib_.fn, rc));
    }
  }

  ~NcclTransport() override {
    // Unwinding (this rank or the control channel failed): a peer may be gone, and finalize
    // would wait for it, so the communicator is aborted.
    const bool clean = !failed_ && std::uncaught_exceptions() == 0;
    if (comm_ && clean) lib_.fn.CommFinalize(comm_);
    if (comm_) (clean ? lib_.fn.CommDestroy : lib_.fn.CommAbort)(comm_);
    if (buf_) cudaFree(buf_);
    if (small_) cudaFree(small_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  double bandwidth(int me, int src, int dst, const SampleLimits& l) override {
    reserve(l.bytes);
    return best_of_samples(
        me, src, dst, l, [&](int to) { return send_sample(to, l); },
        [&](int from) { receive_sample(from); });
  }

  double latency(int me, int a, int b, const SampleLimits& l) override {
    const auto t0 = Clock::now();
    const double bound = phase_bound_seconds(l);
    std::vector<double> warm, us;
    if (me != a) {
      echo(a);
      echo(a);
      return 0;
    }
    ping(b, std::max(1, l.latency_iters / 10), t0, bound, warm);
    ping(b, l.samples * l.latency_iters, t0, bound, us);
    return us.empty() ? -1 : median_of(us);
  }

 private:
  static constexpr std::size_t kSmall = 8;

  void reserve(std::uint64_t bytes) {
    if (bytes <= buf_bytes_) return;
    if (buf_) cudaFree(buf_);
    buf_ = nullptr;
    cuda::check(cudaMalloc(&buf_, bytes), "cudaMalloc");
    buf_bytes_ = bytes;
  }

  void ok(int rc, const char* what) {
    if (rc == nccl::kSuccess) return;
    failed_ = true;
    runtime_error("NCCL {} failed on rank {}: {}", what, control_.rank(),
                  nccl::result_reason(lib_.fn, rc));
  }

  // Waits for everything queued on the stream, without blocking forever on a dead peer.
  void wait(const char* what) {
    const auto t0 = Clock::now();
    for (;;) {
      const cudaError_t e = cudaStreamQuery(stream_);
      if (e == cudaSuccess) return;
      if (e != cudaErrorNotReady) {
        failed_ = true;
        cuda::check(e, what);
      }
      int async = nccl::kSuccess;
      if (lib_.fn.CommGetAsyncError(comm_, &async) == nccl::kSuccess && async != nccl::kSuccess &&
          async != nccl::kInProgress)
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

  // Batches of `count` messages sent in one group, each answered by an 8-byte acknowledgement
  // from the receiver over NCCL; the batch header travels over the control channel.
  double send_sample(int dst, const SampleLimits& l) {
    SampleBatches sample(l);
    while (sample.more()) {
      const SampleBatches::Batch b = sample.next();
      Header h{static_cast<std::uint32_t>(b.count), static_cast<std::uint32_t>(b.bytes)};
      const auto b0 = Clock::now();
      control_.send(dst, &h, sizeof h);
      ok(lib_.fn.GroupStart(), "ncclGroupStart");
      for (std::uint64_t k = 0; k < b.count; ++k)
        ok(lib_.fn.Send(buf_, b.bytes, kInt8, dst, comm_, stream_), "ncclSend");
      ok(lib_.fn.GroupEnd(), "ncclGroupEnd");
      ok(lib_.fn.Recv(small_, kSmall, kInt8, dst, comm_, stream_), "ncclRecv");
      wait("send/recv");
      sample.acknowledged(b, seconds_since(b0));
    }
    const double figure = sample.GBps();
    Header end;
    control_.send(dst, &end, sizeof end);
    return figure;
  }

  void receive_sample(int src) {
    for (;;) {
      Header h;
      control_.recv(src, &h, sizeof h);
      if (h.count == 0) return;
      reserve(h.bytes);
      ok(lib_.fn.GroupStart(), "ncclGroupStart");
      for (std::uint32_t k = 0; k < h.count; ++k)
        ok(lib_.fn.Recv(buf_, h.bytes, kInt8, src, comm_, stream_), "ncclRecv");
      ok(lib_.fn.GroupEnd(), "ncclGroupEnd");
      ok(lib_.fn.Send(static_cast<char*>(small_) + kSmall, kSmall, kInt8, src, comm_, stream_),
         "ncclSend");
      wait("send/recv");
    }
  }

  // Up to `iters` 8-byte round trips, fewer once `bound` seconds have passed since `t0` (at
  // least one), announced to the echoing side over the control channel kPingChunk at a time.
  // Appends each one's one-way microseconds.
  void ping(int b, int iters, Clock::time_point t0, double bound, std::vector<double>& us) {
    int done = 0;
    while (done < iters && (done == 0 || seconds_since(t0) < bound)) {
      Header h{static_cast<std::uint32_t>(std::min(kPingChunk, iters - done)), kSmall};
      control_.send(b, &h, sizeof h);
      for (std::uint32_t i = 0; i < h.count; ++i) {
        const auto s = Clock::now();
        ok(lib_.fn.Send(small_, kSmall, kInt8, b, comm_, stream_), "ncclSend");
        ok(lib_.fn.Recv(static_cast<char*>(small_) + kSmall, kSmall, kInt8, b, comm_, stream_),
           "ncclRecv");
        wait("latency round trip");
        us.push_back(seconds_since(s) / 2.0 * 1e6);
      }
      done += static_cast<int>(h.count);
    }
    Header end;
    control_.send(b, &end, sizeof end);
  }

  // The other side of one ping(): every announced round trip queued at once.
  void echo(int a) {
    for (;;) {
      Header h;
      control_.recv(a, &h, sizeof h);
      if (h.count == 0) return;
      for (std::uint32_t i = 0; i < h.count; ++i) {
        ok(lib_.fn.Recv(small_, kSmall, kInt8, a, comm_, stream_), "ncclRecv");
        ok(lib_.fn.Send(small_, kSmall, kInt8, a, comm_, stream_), "ncclSend");
      }
      wait("latency round trip");
    }
  }

  Control& control_;
  const nccl::Library& lib_;
  int device_ = 0;
  nccl::Comm comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  void* buf_ = nullptr;
  std::uint64_t buf_bytes_ = 0;
  void* small_ = nullptr;  // [0, 8): ping and acknowledgement in; [8, 16): out
  bool failed_ = false;
};

}  // namespace

bool nccl_transport_built() {
  return true;
}

std::unique_ptr<PairTransport> nccl_transport(Control& control, int local_rank) {
  return std::make_unique<NcclTransport>(control, local_rank);
}

}  // namespace cb
