// How `probe links` moves one pair's samples: over the run's control channel, or over TCP
// pinned to one NIC. Every sample is time-bounded: it ends when its bytes are acknowledged or
// when the sample time has passed, whichever comes first, and its figure is the bytes
// acknowledged by then over the time taken, so a slow link costs at most the sample time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collectives/backends/backend.hpp"

namespace cb {

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

class PairTransport {
 public:
  virtual ~PairTransport() = default;
  // Best GB/s of the samples from `src` to `dst`, at `src` (0 at `dst`). Both call it at once.
  virtual double bandwidth(int me, int src, int dst, const SampleLimits& l) = 0;
  // Median one-way microseconds of 8-byte round trips, at `a` (0 at `b`; negative when none
  // completed). Both call it at once.
  virtual double latency(int me, int a, int b, const SampleLimits& l) = 0;
};

// Over the control channel (MPI under a launcher, Gloo over TCP for the local launcher). A
// message already handed to MPI cannot be taken back, so a sample sends in batches sized from
// the rate so far to take an eighth of the sample time, and stops starting batches once the
// time is up: a sample ends within the sample time plus one batch.
std::unique_ptr<PairTransport> control_transport(Control& control);

}  // namespace cb
