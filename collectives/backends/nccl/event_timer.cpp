#include "collectives/backends/nccl/event_timer.hpp"

#include <algorithm>

#include "collectives/backends/nccl/cuda_check.hpp"

namespace cb::cuda {

EventPool::EventPool(std::vector<TimedStream> streams)
    : streams_(std::move(streams)), events_(streams_.size()) {}

EventPool::~EventPool() {
  for (std::size_t s = 0; s < streams_.size(); ++s) {
    DeviceScope scope(streams_[s].device);
    for (cudaEvent_t e : events_[s]) cudaEventDestroy(e);
  }
}

void EventPool::ensure(std::size_t per_stream) {
  for (std::size_t s = 0; s < streams_.size(); ++s) {
    if (events_[s].size() >= per_stream) continue;
    DeviceScope scope(streams_[s].device);
    while (events_[s].size() < per_stream) {
      cudaEvent_t e = nullptr;
      check(cudaEventCreate(&e), "cudaEventCreate");
      events_[s].push_back(e);
    }
  }
}

namespace {

class EventTimer : public IterationTimer {
 public:
  explicit EventTimer(std::shared_ptr<EventPool> pool) : pool_(std::move(pool)) {}

  void reserve(std::size_t n) override {
    expected_ = std::max<std::size_t>(n, 1);
    group_ = (expected_ + kMaxTimedEvents - 1) / kMaxTimedEvents;
    pool_->ensure((expected_ + group_ - 1) / group_ + 1);
  }
  void start() override {
    marks_ = 0;
    slot_ = 0;
    record(0);
  }
  void mark() override {
    ++marks_;
    if (marks_ % group_ == 0 || marks_ == expected_) {
      ++slot_;
      pool_->ensure(slot_ + 1);  // more iterations than reserved
      record(slot_);
    }
  }
  // A batch without marks (timed whole, for time_us) is its start and stop events alone.
  bool times_batches_alone() const override { return true; }
  bool marks_always_show() const override { return true; }
  void stop() override {
    // Fewer iterations than reserved, or none marked.
    if (slot_ == 0 || (marks_ % group_ != 0 && marks_ != expected_)) {
      ++slot_;
      record(slot_);
    }
    for (std::size_t s = 0; s < pool_->streams().size(); ++s) {
      check(cudaEventSynchronize(pool_->at(s, slot_)), "cudaEventSynchronize");
    }
  }
  std::vector<double> samples_us() override {
    std::vector<double> out;
    out.reserve(marks_);
    std::size_t done = 0;
    for (std::size_t k = 1; k <= slot_; ++k) {
      std::size_t iters = std::min(group_, marks_ - done);
      double us = 0;
      for (std::size_t s = 0; s < pool_->streams().size(); ++s) {
        us = std::max(us, between(s, k - 1, k));
      }
      for (std::size_t i = 0; i < iters; ++i) out.push_back(us / static_cast<double>(iters));
      done += iters;
    }
    return out;
  }
  double elapsed_us() override {
    double us = 0;
    for (std::size_t s = 0; s < pool_->streams().size(); ++s) {
      us = std::max(us, between(s, 0, slot_));
    }
    return us;
  }

 private:
  void record(std::size_t index) {
    const auto& streams = pool_->streams();
    for (std::size_t s = 0; s < streams.size(); ++s) {
      if (streams.size() > 1) check(cudaSetDevice(streams[s].device), "cudaSetDevice");
      check(cudaEventRecord(pool_->at(s, index), streams[s].stream), "cudaEventRecord");
    }
  }
  double between(std::size_t s, std::size_t a, std::size_t b) const {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, pool_->at(s, a), pool_->at(s, b)), "cudaEventElapsedTime");
    return static_cast<double>(ms) * 1000.0;
  }

  std::shared_ptr<EventPool> pool_;
  std::size_t expected_ = 1, group_ = 1, marks_ = 0, slot_ = 0;
};

}  // namespace

std::unique_ptr<IterationTimer> make_event_timer(std::shared_ptr<EventPool> pool) {
  return std::make_unique<EventTimer>(std::move(pool));
}

}  // namespace cb::cuda
