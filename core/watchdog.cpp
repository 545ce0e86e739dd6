#include "core/watchdog.hpp"

#include <fmt/format.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "common/error.hpp"

namespace cb {

namespace {

// Far enough to mean "never", near enough that now + timeout cannot overflow the clock.
constexpr double kLongestTimeout = 1e9;

}  // namespace

Watchdog::Watchdog(double timeout_seconds, bool report)
    : timeout_(timeout_seconds),
      timeout_duration_(std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(std::clamp(timeout_seconds, 0.0, kLongestTimeout)))),
      report_(report),
      deadline_(Clock::now() + timeout_duration_) {
  thread_ = std::thread([this] { loop(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Watchdog::restart_clock() {
  // Only ever later than the deadline the thread sleeps to, so it need not be woken.
  deadline_ = Clock::now() + timeout_duration_;
  seen_progress_ = progress_.load(std::memory_order_relaxed);
}

void Watchdog::arm(std::string what) {
  std::lock_guard lock(mu_);
  what_ = std::move(what);
  armed_ = true;
  restart_clock();
}

void Watchdog::rearm() {
  std::lock_guard lock(mu_);
  restart_clock();
}

void Watchdog::disarm() {
  std::lock_guard lock(mu_);
  armed_ = false;
}

void Watchdog::on_fire(std::function<void()> hook) {
  std::lock_guard lock(mu_);
  hooks_.push_back(std::move(hook));
}

void Watchdog::loop() {
  pthread_setname_np(pthread_self(), "cb-watchdog");
  std::unique_lock lock(mu_);
  while (!stopping_) {
    cv_.wait_until(lock, deadline_);
    if (stopping_) break;
    wakeups_.fetch_add(1, std::memory_order_relaxed);
    const auto now = Clock::now();
    if (now < deadline_) continue;  // re-armed meanwhile: sleep on to the new deadline
    const std::uint64_t p = progress_.load(std::memory_order_relaxed);
    if (!armed_ || p != seen_progress_) {
      restart_clock();
      continue;
    }
    fire();
  }
}

void Watchdog::fire() {
  fired_line_ = fmt::format("timeout: {} made no progress for {:g} s (--timeout){}{}; aborting",
                            what_, timeout_, who_.empty() ? "" : " on ", who_);
  if (report_) {
    std::string line = "commbench: " + fired_line_ + "\n";
    ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
    (void)ignored;
  }
  for (auto& hook : hooks_) hook();
  std::fflush(nullptr);
  // A launcher may kill the other ranks as soon as one exits (MPICH's hydra does): a rank that
  // does not report lets the reporting one, whose watchdog fires at the same deadline, speak
  // first.
  if (!report_) std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  ::_exit(kExitTimeout);
}

}  // namespace cb
