#include <chrono>

#include "core/timer.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define CB_HAVE_TSC 1
#endif

namespace cb {

namespace {

using Clock = std::chrono::steady_clock;

inline std::uint64_t ticks() {
#ifdef CB_HAVE_TSC
  return __rdtsc();
#else
  return static_cast<std::uint64_t>(Clock::now().time_since_epoch().count());
#endif
}

class HostTimer : public IterationTimer {
 public:
  void reserve(std::size_t n) override {
    // Written once here, so the timed loop's stores into it take no first-touch page faults.
    if (marks_.capacity() < n) marks_.assign(n, 0);
    marks_.clear();
    if (enters_.capacity() < n) enters_.assign(n, 0);
    enters_.clear();
  }
  void start() override {
    marks_.clear();
    enters_.clear();
    start_ticks_ = ticks();
    start_ = Clock::now();
  }
  void mark() override { marks_.push_back(ticks()); }
  void enter() override { enters_.push_back(ticks()); }
  void stop() override {
    stop_ = Clock::now();
    stop_ticks_ = ticks();
  }
  bool times_batches_alone() const override { return true; }
  double elapsed_us() override {
    return std::chrono::duration<double, std::micro>(stop_ - start_).count();
  }
  std::vector<double> samples_us() override {
    std::vector<double> out(marks_.size());
    const double span = static_cast<double>(stop_ticks_ - start_ticks_);
    const double us_per_tick = span > 0 ? elapsed_us() / span : 0.0;
    std::uint64_t prev = start_ticks_;
    for (std::size_t i = 0; i < marks_.size(); ++i) {
      out[i] = static_cast<double>(marks_[i] - prev) * us_per_tick;
      prev = marks_[i];
    }
    return out;
  }
  // Entry k is enter()'s stamp where it was called before each call, else the previous exit (the
  // batch's start for the first): nothing ran between them but the stamp.
  CallStamps call_stamps() override {
    CallStamps out;
    const std::size_t n = marks_.size();
    if (n == 0) return out;
    const double span = static_cast<double>(stop_ticks_ - start_ticks_);
    const double us_per_tick = span > 0 ? elapsed_us() / span : 0.0;
    const double origin =
        std::chrono::duration<double, std::micro>(start_.time_since_epoch()).count();
    auto at = [&](std::uint64_t t) {
      return origin +
             static_cast<double>(static_cast<std::int64_t>(t - start_ticks_)) * us_per_tick;
    };
    const bool entered = enters_.size() == n;
    out.entry.resize(n);
    out.exit.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      out.exit[i] = at(marks_[i]);
      out.entry[i] = entered ? at(enters_[i]) : i == 0 ? origin : out.exit[i - 1];
    }
    return out;
  }

 private:
  std::vector<std::uint64_t> marks_;
  std::vector<std::uint64_t> enters_;
  std::uint64_t start_ticks_ = 0, stop_ticks_ = 0;
  Clock::time_point start_, stop_;
};

}  // namespace

std::unique_ptr<IterationTimer> make_host_timer() {
  return std::make_unique<HostTimer>();
}

}  // namespace cb
