// The thread audit sees which other threads ran during a batch and the page faults the timing
// thread took; the host timer takes none in its timed stretch; the outlier share.
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "collectives/engine/thread_audit.hpp"
#include "collectives/engine/timing_diagnostics.hpp"
#include "core/timer.hpp"

namespace cb {
namespace {

using namespace std::chrono_literals;

template <typename F>
void spin_for(std::chrono::milliseconds d, F each) {
  const auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) each();
}

TEST(ThreadAudit, SeesAThreadThatRunsDuringABatchAndNotOneThatSleeps) {
  std::atomic<bool> stop{false};
  std::atomic<int> spinner_tid{0}, sleeper_tid{0};
  std::thread spinner([&] {
    spinner_tid = static_cast<int>(::syscall(SYS_gettid));
    while (!stop) std::this_thread::sleep_for(1ms);  // wakes a thousand times a second
  });
  std::mutex mu;
  std::condition_variable cv;
  std::thread sleeper([&] {
    sleeper_tid = static_cast<int>(::syscall(SYS_gettid));
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return stop.load(); });
  });
  while (!spinner_tid || !sleeper_tid) std::this_thread::sleep_for(1ms);
  std::this_thread::sleep_for(50ms);  // the sleeper is in its long sleep
  ThreadAudit audit;
  audit.before_batch();
  spin_for(200ms, [] {});
  audit.after_batch();
  {
    std::lock_guard lock(mu);
    stop = true;
  }
  cv.notify_all();
  spinner.join();
  sleeper.join();
  bool saw_spinner = false, saw_sleeper = false;
  for (const auto& a : audit.activity()) {
    if (a.tid == spinner_tid) {
      saw_spinner = true;
      EXPECT_EQ(a.batches, 1u);
      EXPECT_GT(a.slices, 10u);
    }
    if (a.tid == sleeper_tid) {
      saw_sleeper = true;
      EXPECT_EQ(a.batches, 0u);
      EXPECT_EQ(a.slices, 0u);
    }
    EXPECT_NE(a.tid, static_cast<int>(::syscall(SYS_gettid)));  // never the caller
  }
  EXPECT_TRUE(saw_spinner);
  EXPECT_TRUE(saw_sleeper);
  EXPECT_EQ(audit.batches(), 1u);
}

TEST(TimingDiagnostics, ShareAboveTenTimesTheMedian) {
  EXPECT_EQ(share_above_median_multiple({}, 10), 0.0);
  std::vector<double> s(98, 1.0);
  s.push_back(10.0);  // exactly 10 x p50: not above
  s.push_back(10.5);
  EXPECT_DOUBLE_EQ(share_above_median_multiple(s, 10), 0.01);
}

TEST(ThreadAudit, CountsTheCallersPageFaults) {
  ThreadAudit audit;
  audit.before_batch();
  std::vector<char> fresh(8 << 20);  // 2048 pages written for the first time
  audit.after_batch();
  EXPECT_GE(audit.own_page_faults(), 4u);  // even with 2 MiB transparent huge pages
  EXPECT_GT(fresh[12345] + 1, 0);
}

TEST(HostTimer, TakesNoPageFaultsWhileMarking) {
  constexpr std::size_t kMarks = 1 << 20;  // 8 MiB of time stamps
  auto timer = make_host_timer();
  timer->reserve(kMarks);
  ThreadAudit audit;
  audit.before_batch();
  timer->start();
  for (std::size_t i = 0; i < kMarks; ++i) timer->mark();
  timer->stop();
  audit.after_batch();
  EXPECT_LE(audit.own_page_faults(), 2u);
  EXPECT_EQ(timer->samples_us().size(), kMarks);
}

}  // namespace
}  // namespace cb
