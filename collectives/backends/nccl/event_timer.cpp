#include "collectives/backends/nccl/event_timer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "collectives/backends/nccl/cuda_check.hpp"
#include "collectives/backends/nccl/event_stamps.hpp"

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
    host_entries_.assign(expected_, std::numeric_limits<double>::quiet_NaN());
    // The stream is idle here (the previous batch's stop waited for it), so the start event
    // runs as soon as it is recorded: the host's clock just then places every event.
    const double before = now_us();
    record(0);
    anchor_us_ = before;
    anchor_error_us_ = now_us() - before;
  }
  // Before each call after the first (whose entry is the start event): the host's clock, for
  // a kernel the host enqueued later than the previous one ended. A clock read, no GPU work, so
  // the stream runs as without it.
  void enter() override {
    if (marks_ == 0 || marks_ >= host_entries_.size()) return;
    host_entries_[marks_] = now_us();
  }
  bool needs_entries() const override { return true; }
  CallStamps call_stamps() override {
    if (group_ != 1 || marks_ == 0 || slot_ != marks_) return {};
    std::vector<std::vector<double>> exits(pool_->streams().size());
    for (std::size_t s = 0; s < exits.size(); ++s)
      for (std::size_t i = 0; i < marks_; ++i)
        exits[s].push_back(elapsed_ms(pool_->at(s, 0), pool_->at(s, i + 1)));
    CallStamps out = stamps_from_events(anchor_us_, exits, host_entries_);
    out.error_us = anchor_error_us_;
    return out;
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
    return elapsed_ms(pool_->at(s, a), pool_->at(s, b)) * 1000.0;
  }
  static double elapsed_ms(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
    return static_cast<double>(ms);
  }
  static double now_us() {
    using namespace std::chrono;
    return duration<double, std::micro>(steady_clock::now().time_since_epoch()).count();
  }

  std::shared_ptr<EventPool> pool_;
  std::size_t expected_ = 1, group_ = 1, marks_ = 0, slot_ = 0;
  std::vector<double> host_entries_;  // per iteration: the host's clock before its issue
  double anchor_us_ = 0, anchor_error_us_ = 0;
};

}  // namespace

std::unique_ptr<IterationTimer> make_event_timer(std::shared_ptr<EventPool> pool) {
  return std::make_unique<EventTimer>(std::move(pool));
}

}  // namespace cb::cuda
