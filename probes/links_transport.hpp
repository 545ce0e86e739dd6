// How `probe links` moves one pair's samples: over the run's control channel, over TCP pinned
// to one NIC, or over NCCL send/recv between GPUs pinned to one HCA. Every sample is time-bounded:
// it ends when its bytes are acknowledged or when the sample time has passed, whichever comes
// first, and its figure is the bytes acknowledged by then over the time taken, so a slow link costs
// at most the sample time.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/control.hpp"

namespace cb {

// Control: the run's control channel; Tcp: one pass per NIC over TCP from its address; Nccl: one
// pass per HCA over NCCL send/recv with NCCL_IB_HCA naming that HCA alone.
enum class LinksTransport { Control, Tcp, Nccl };
const char* transport_name(LinksTransport t);  // "control", "tcp", "nccl"

struct SampleLimits {
  std::uint64_t bytes = 4ULL << 20;  // per message
  int window = 16;                   // messages per sample: a sample moves bytes x window
  int samples = 5;                   // after one warm-up sample; the best is reported
  double seconds = 0.05;             // the most one sample sends for
  int latency_iters = 200;           // round trips per latency sample
};

// The most one direction or one latency phase of a pair takes, link speed aside: the warm-up
// and every sample, each cut at `seconds`.
double phase_bound_seconds(const SampleLimits& l);

// One direction of a bandwidth phase, on both sides at once: the receiver takes a warm-up sample
// and `l.samples` more; the sender sends them (`send(to)` returns a sample's GB/s) and returns the
// best, 0 at the receiver.
template <typename Send, typename Receive>
double best_of_samples(int me, int src, int dst, const SampleLimits& l, Send send,
                       Receive receive) {
  if (me != src) {
    for (int k = 0; k <= l.samples; ++k) receive(src);
    return 0;
  }
  send(dst);  // warm-up: connection set-up, registration
  double best = 0;
  for (int k = 0; k < l.samples; ++k) best = std::max(best, send(dst));
  return best;
}

class PairTransport {
 public:
  virtual ~PairTransport() = default;
  // Best GB/s of the samples from `src` to `dst`, at `src` (0 at `dst`). Both call it at once.
  virtual double bandwidth(int me, int src, int dst, const SampleLimits& l) = 0;
  // Median one-way microseconds of 8-byte round trips, at `a` (0 at `b`; negative when none
  // completed). Both call it at once.
  virtual double latency(int me, int a, int b, const SampleLimits& l) = 0;
};

// One time-bounded sample at the sender over a transport that cannot take back what it was
// handed: batches sized from the rate so far to take an eighth of the sample time (the first is
// 64 KiB, each at most 4 times the last), no batch started once the time is up. The figure is
// the bytes of the acknowledged batches over the time since the sample began.
class SampleBatches {
 public:
  struct Batch {
    std::uint64_t bytes = 0;  // per message
    std::uint64_t count = 0;  // messages
  };
  explicit SampleBatches(const SampleLimits& l);
  // Whether another batch starts: bytes x window not yet acknowledged and time left.
  bool more() const;
  Batch next() const;
  // `b` was acknowledged `took` seconds after it started.
  void acknowledged(const Batch& b, double took);
  double GBps() const;  // bytes acknowledged / seconds since the sample began, 1 GB = 1e9 bytes

 private:
  SampleLimits l_;
  std::uint64_t total_ = 0, acked_ = 0, batch_ = 0;
  std::chrono::steady_clock::time_point t0_;
};

// Over the control channel (MPI under a launcher, Gloo over TCP for the local launcher). A
// message already handed to MPI cannot be taken back, so a sample sends in batches sized from
// the rate so far to take an eighth of the sample time, and stops starting batches once the
// time is up: a sample ends within the sample time plus one batch.
std::unique_ptr<PairTransport> control_transport(Control& control);

// Whether this build has the NCCL transport (the nccl backend offers peer messages: it needs
// CUDA), and why this process cannot use it (no GPU visible; empty when it can).
bool nccl_transport_built();
std::string nccl_transport_unavailable();
// Over NCCL send/recv between the ranks' GPUs (each rank's local GPU: `local_rank` among the
// visible ones), every rank of `control` in one NCCL communicator on NCCL's IB network, through
// the nccl backend's peer messages. NCCL reads NCCL_IB_HCA once per process, so the caller sets
// it before this is first called. Samples are time-bounded as over the control channel (batches
// of an eighth of the sample time, each acknowledged by the receiver over NCCL). Every rank calls
// it together. Throws a runtime Error naming NCCL's reason when the communicator cannot be made;
// a usage Error in a build without CUDA.
std::unique_ptr<PairTransport> nccl_transport(Control& control, int local_rank);

}  // namespace cb
