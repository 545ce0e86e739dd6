// Ends a stuck run: while armed, if no progress is reported for `timeout`, it prints one line
// naming the operation, lets registered hooks abort communicators, and exits with code 4.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace cb {

class Watchdog {
 public:
  explicit Watchdog(double timeout_seconds, bool report = true);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void arm(std::string what);  // starts the clock on `what` (e.g. "allreduce 4 MiB float")
  // Reports progress; `counter` must grow. A plain store, cheap enough for timed loops.
  void progress(std::uint64_t counter) { progress_.store(counter, std::memory_order_relaxed); }
  void disarm();
  void on_fire(std::function<void()> hook);  // e.g. ncclCommAbort
  double timeout_seconds() const { return timeout_; }

 private:
  void loop();

  double timeout_;
  bool report_;
  std::atomic<std::uint64_t> progress_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool armed_ = false;
  bool stopping_ = false;
  std::string what_;
  std::vector<std::function<void()>> hooks_;
  std::thread thread_;
};

}  // namespace cb
