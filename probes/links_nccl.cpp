// `probe links` over NCCL send/recv between the two ranks' GPUs, for a pass pinned to one HCA:
// the samples are timed here, the messages are the nccl backend's (its registry entry's
// peer_messages), which also says why NCCL_IB_HCA needs a fresh process per HCA.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collectives/backends/registry.hpp"
#include "common/clock.hpp"
#include "common/error.hpp"
#include "common/median.hpp"
#include "probes/links_transport.hpp"

namespace cb {

namespace {

using Clock = std::chrono::steady_clock;

// Latency round trips announced to the echoing side at a time (it queues them all on its GPU).
constexpr int kPingChunk = 10;

struct Header {
  std::uint32_t count = 0;  // messages (round trips for latency); 0 ends the sample
  std::uint32_t bytes = 0;  // each
};

class NcclTransport : public PairTransport {
 public:
  NcclTransport(Control& control, std::unique_ptr<PeerMessages> messages)
      : control_(control), nccl_(std::move(messages)) {}

  double bandwidth(int me, int src, int dst, const SampleLimits& l) override {
    nccl_->reserve(l.bytes);
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
  // Batches of `count` messages sent in one group, each answered by an 8-byte acknowledgement
  // from the receiver over NCCL; the batch header travels over the control channel.
  double send_sample(int dst, const SampleLimits& l) {
    SampleBatches sample(l);
    while (sample.more()) {
      const SampleBatches::Batch b = sample.next();
      Header h{static_cast<std::uint32_t>(b.count), static_cast<std::uint32_t>(b.bytes)};
      const auto b0 = Clock::now();
      control_.send(dst, &h, sizeof h);
      nccl_->send(dst, b.count, b.bytes);
      nccl_->recv_word(dst);
      nccl_->wait("send/recv");
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
      nccl_->reserve(h.bytes);
      nccl_->recv(src, h.count, h.bytes);
      nccl_->send_word(src);
      nccl_->wait("send/recv");
    }
  }

  // Up to `iters` 8-byte round trips, fewer once `bound` seconds have passed since `t0` (at
  // least one), announced to the echoing side over the control channel kPingChunk at a time.
  // Appends each one's one-way microseconds.
  void ping(int b, int iters, Clock::time_point t0, double bound, std::vector<double>& us) {
    int done = 0;
    while (done < iters && (done == 0 || seconds_since(t0) < bound)) {
      Header h{static_cast<std::uint32_t>(std::min(kPingChunk, iters - done)), kWord};
      control_.send(b, &h, sizeof h);
      for (std::uint32_t i = 0; i < h.count; ++i) {
        const auto s = Clock::now();
        nccl_->send_word(b);
        nccl_->recv_word(b);
        nccl_->wait("latency round trip");
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
        nccl_->recv_word(a);
        nccl_->send_word(a);
      }
      nccl_->wait("latency round trip");
    }
  }

  static constexpr std::uint32_t kWord = 8;  // a ping or an acknowledgement

  Control& control_;
  std::unique_ptr<PeerMessages> nccl_;
};

const BackendEntry* nccl_entry() {
  const BackendEntry* e = find_backend("nccl");
  return e && e->peer_messages ? e : nullptr;
}

}  // namespace

bool nccl_transport_built() {
  return nccl_entry() != nullptr;
}

std::string nccl_transport_unavailable() {
  return nccl_transport_built() ? nccl_entry()->peer_messages->unavailable() : std::string();
}

std::unique_ptr<PairTransport> nccl_transport(Control& control, int local_rank) {
  if (!nccl_transport_built())
    usage_error("--transport nccl: this commbench was built without CUDA, so it has no NCCL");
  return std::make_unique<NcclTransport>(control,
                                         nccl_entry()->peer_messages->open(control, local_rank));
}

}  // namespace cb
