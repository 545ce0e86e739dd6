#include "collectives/watchdog.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "common/error.hpp"

namespace cb {

Watchdog::Watchdog(double timeout_seconds, bool report)
    : timeout_(timeout_seconds), report_(report), thread_([this] { loop(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Watchdog::arm(std::string what) {
  std::lock_guard lock(mu_);
  what_ = std::move(what);
  armed_ = true;
  progress_.fetch_add(1 << 20, std::memory_order_relaxed);
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
  using namespace std::chrono;
  const auto poll = milliseconds(std::clamp<long>(static_cast<long>(timeout_ * 100), 10, 200));
  std::unique_lock lock(mu_);
  std::uint64_t last = progress_.load();
  auto last_change = steady_clock::now();
  while (!stopping_) {
    cv_.wait_for(lock, poll);
    if (stopping_) break;
    std::uint64_t now_progress = progress_.load(std::memory_order_relaxed);
    auto now = steady_clock::now();
    if (!armed_ || now_progress != last) {
      last = now_progress;
      last_change = now;
      continue;
    }
    if (duration<double>(now - last_change).count() < timeout_) continue;
    if (report_) {
      std::string line =
          fmt::format("commbench: timeout: {} made no progress for {:g} s (--timeout); aborting\n",
                      what_, timeout_);
      ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
      (void)ignored;
    }
    for (auto& hook : hooks_) hook();
    std::fflush(nullptr);
    // A launcher may kill the other ranks as soon as one exits (MPICH's hydra does): a rank that
    // does not report lets the reporting one, whose watchdog fires within a poll, speak first.
    if (!report_) std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    ::_exit(kExitTimeout);
  }
}

}  // namespace cb
