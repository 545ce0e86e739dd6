#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>

#include "common/clock.hpp"
#include "common/median.hpp"
#include "probes/links_transport.hpp"

namespace cb {

namespace {

using Clock = std::chrono::steady_clock;

// The first batch of a sample, before any rate is known.
constexpr std::uint64_t kFirstBatch = 64 << 10;
// A batch is sized to take this share of the sample time at the rate of the last one, and grows
// at most this many times from one batch to the next.
constexpr double kBatchShare = 1.0 / 8;
constexpr double kMostGrowth = 4;

struct BatchHeader {
  std::uint32_t count = 0;  // messages; 0 ends the sample
  std::uint32_t bytes = 0;  // each
};

class ControlTransport : public PairTransport {
 public:
  explicit ControlTransport(Control& control) : control_(control) {}

  double bandwidth(int me, int src, int dst, const SampleLimits& l) override {
    if (buf_.size() < l.bytes) buf_.assign(l.bytes, 1);
    return best_of_samples(
        me, src, dst, l, [&](int to) { return send_sample(to, l); },
        [&](int from) { receive_sample(from); });
  }

  double latency(int me, int a, int b, const SampleLimits& l) override {
    const auto t0 = Clock::now();
    const double bound = phase_bound_seconds(l);
    std::vector<double> warm, us;
    pingpong(me, a, b, std::max(1, l.latency_iters / 10), t0, bound, warm);
    pingpong(me, a, b, l.samples * l.latency_iters, t0, bound, us);
    if (me != a) return 0;
    return us.empty() ? -1 : median_of(us);
  }

 private:
  // One sample at the sender: batches of messages, each answered with a one-byte
  // acknowledgement, until bytes x window are acknowledged or the time is up. GB/s.
  double send_sample(int dst, const SampleLimits& l) {
    SampleBatches sample(l);
    char ack = 0;
    while (sample.more()) {
      const SampleBatches::Batch b = sample.next();
      BatchHeader h{static_cast<std::uint32_t>(b.count), static_cast<std::uint32_t>(b.bytes)};
      const auto b0 = Clock::now();
      control_.send(dst, &h, sizeof h);
      control_.send(dst, buf_.data(), b.bytes, static_cast<int>(b.count));
      control_.recv(dst, &ack, 1);
      sample.acknowledged(b, seconds_since(b0));
    }
    const double figure = sample.GBps();
    BatchHeader end;
    control_.send(dst, &end, sizeof end);
    return figure;
  }

  void receive_sample(int src) {
    char ack = 0;
    for (;;) {
      BatchHeader h;
      control_.recv(src, &h, sizeof h);
      if (h.count == 0) return;
      if (buf_.size() < h.bytes) buf_.resize(h.bytes);
      control_.recv(src, buf_.data(), h.bytes, static_cast<int>(h.count));
      control_.send(src, &ack, 1);
    }
  }

  // Up to `iters` 8-byte round trips, fewer once `bound` seconds have passed since `t0` (at
  // least one); the first byte tells the echoing side whether another follows. Appends each
  // one's one-way microseconds at `a`.
  void pingpong(int me, int a, int b, int iters, Clock::time_point t0, double bound,
                std::vector<double>& us) {
    char msg[8] = {};
    if (me == a) {
      for (int i = 0; i < iters && (i == 0 || seconds_since(t0) < bound); ++i) {
        msg[0] = 1;
        const auto s = Clock::now();
        control_.send(b, msg, sizeof msg);
        control_.recv(b, msg, sizeof msg);
        us.push_back(seconds_since(s) / 2.0 * 1e6);
      }
      msg[0] = 0;
      control_.send(b, msg, sizeof msg);
      return;
    }
    for (;;) {
      control_.recv(a, msg, sizeof msg);
      if (msg[0] == 0) return;
      control_.send(a, msg, sizeof msg);
    }
  }

  Control& control_;
  std::vector<char> buf_;
};

}  // namespace

SampleBatches::SampleBatches(const SampleLimits& l)
    : l_(l),
      total_(l.bytes * static_cast<std::uint64_t>(l.window)),
      batch_(std::min(kFirstBatch, total_)),
      t0_(Clock::now()) {}

bool SampleBatches::more() const {
  return acked_ < total_ && seconds_since(t0_) < l_.seconds;
}

SampleBatches::Batch SampleBatches::next() const {
  const std::uint64_t left = total_ - acked_;
  const std::uint64_t size = std::min({l_.bytes, batch_, left});
  const std::uint64_t count = std::clamp<std::uint64_t>(std::min(batch_, left) / size, 1,
                                                        static_cast<std::uint64_t>(l_.window));
  return {size, count};
}

void SampleBatches::acknowledged(const Batch& b, double took) {
  const std::uint64_t moved = b.bytes * b.count;
  acked_ += moved;
  const double rate = moved / std::max(took, 1e-9);
  batch_ = static_cast<std::uint64_t>(std::clamp(rate * l_.seconds * kBatchShare,
                                                 static_cast<double>(kFirstBatch),
                                                 kMostGrowth * static_cast<double>(moved)));
}

double SampleBatches::GBps() const {
  return static_cast<double>(acked_) / std::max(seconds_since(t0_), 1e-9) / 1e9;
}

const char* transport_name(LinksTransport t) {
  switch (t) {
    case LinksTransport::Tcp:
      return "tcp";
    case LinksTransport::Nccl:
      return "nccl";
    case LinksTransport::Control:
      break;
  }
  return "control";
}

double phase_bound_seconds(const SampleLimits& l) {
  return (1 + l.samples) * l.seconds;
}

std::unique_ptr<PairTransport> control_transport(Control& control) {
  return std::make_unique<ControlTransport>(control);
}

}  // namespace cb
