// Iteration timing with CUDA events: a batch timed whole (for time_us) records only its start
// and stop events on each GPU's stream, as nccl-tests does; its stamped twin (for the samples)
// records an event after every iteration, so a sample is the GPU time between two consecutive
// completions (the slowest of the process's GPUs). Host launch overhead shows up only where the GPU
// waits for the host, as in a back-to-back loop. Batches larger than the event pool record every
// k-th iteration and spread each interval evenly over its iterations. For lateness, the stamped
// batch also reads the host's clock before each call (a kernel starts later than the previous
// one ended where the host enqueued it later), and places the events on the host's steady clock
// by the batch's first event, recorded on an idle stream.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <vector>

#include "core/timer.hpp"

namespace cb::cuda {

struct TimedStream {
  int device;
  cudaStream_t stream;
};

// Events kept by a communicator and reused by its timers (one timer runs at a time).
class EventPool {
 public:
  explicit EventPool(std::vector<TimedStream> streams);
  ~EventPool();
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;

  void ensure(std::size_t per_stream);  // at least this many events per stream
  cudaEvent_t at(std::size_t stream, std::size_t index) const { return events_[stream][index]; }
  const std::vector<TimedStream>& streams() const { return streams_; }

 private:
  std::vector<TimedStream> streams_;
  std::vector<std::vector<cudaEvent_t>> events_;
};

inline constexpr std::size_t kMaxTimedEvents = 16384;

std::unique_ptr<IterationTimer> make_event_timer(std::shared_ptr<EventPool> pool);

}  // namespace cb::cuda
