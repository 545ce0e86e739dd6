// Ends a stuck run: while armed, if no progress is reported for `timeout`, it prints one line
// naming the operation, lets registered hooks abort communicators, and exits with code 4.
//
// Its thread sleeps on a condition variable until the deadline (arm/rearm time + timeout) and
// wakes only then, so it never runs while a batch shorter than the timeout is timed. Arming and
// re-arming only move the deadline later and never wake it. At the deadline it compares the
// progress counter with the value it had at the last (re)arm or check: a change pushes the
// deadline one timeout on, no change fires. A rank stuck since its last (re)arm is therefore
// caught after exactly `timeout`, one that stops in the middle of a long batch within twice it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
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
  void rearm();                // restarts the clock on the same operation (between batches)
  // Reports progress; `counter` must grow. A plain store, cheap enough for timed loops.
  void progress(std::uint64_t counter) { progress_.store(counter, std::memory_order_relaxed); }
  void disarm();
  void on_fire(std::function<void()> hook);  // e.g. ncclCommAbort
  // Who is waiting, for the line ("rank 1, host h1"); set before arming.
  void name_rank(std::string who) { who_ = std::move(who); }
  // The line the watchdog fired with (without "commbench: "), for the hooks to record.
  const std::string& fired_line() const { return fired_line_; }
  double timeout_seconds() const { return timeout_; }
  // How often the thread has woken up (deadlines reached, spurious wake-ups): for tests.
  std::uint64_t wakeups() const { return wakeups_.load(std::memory_order_relaxed); }

 private:
  using Clock = std::chrono::steady_clock;
  void restart_clock();  // with mu_ held
  void loop();
  [[noreturn]] void fire();

  // Alone on its cache line: the timed loop stores here, and nothing else touches the line.
  alignas(64) std::atomic<std::uint64_t> progress_{0};
  alignas(64) double timeout_;
  Clock::duration timeout_duration_;
  bool report_;
  std::atomic<std::uint64_t> wakeups_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool armed_ = false;
  bool stopping_ = false;
  Clock::time_point deadline_;
  std::uint64_t seen_progress_ = 0;
  std::string what_;
  std::string who_;
  std::string fired_line_;
  std::vector<std::function<void()>> hooks_;
  std::thread thread_;
};

}  // namespace cb
