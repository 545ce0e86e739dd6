// The watchdog sleeps to its deadline (no wake-ups while progress is made or it is re-armed in
// time) and fires exactly when nothing moves.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <thread>

#include "core/watchdog.hpp"

namespace cb {
namespace {

using namespace std::chrono_literals;

void spin_for(std::chrono::milliseconds d, const std::function<void()>& each) {
  const auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) each();
}

TEST(Watchdog, SleepsThroughAnArmedStretchShorterThanItsTimeout) {
  Watchdog w(30, false);
  w.arm("allreduce 8 B float sum");
  std::uint64_t n = 0;
  // A second of "timed batches", re-armed between them: a 200 ms poll would wake 5 times.
  for (int batch = 0; batch < 10; ++batch) {
    w.rearm();
    spin_for(100ms, [&] { w.progress(++n); });
  }
  w.disarm();
  EXPECT_EQ(w.wakeups(), 0u);
}

TEST(Watchdog, WakesOncePerTimeoutWhileIdle) {
  Watchdog w(0.2, false);
  std::this_thread::sleep_for(1100ms);
  // About every 0.2 s (fewer when the machine is busy): neither a poll nor asleep for good.
  EXPECT_GE(w.wakeups(), 2u);
  EXPECT_LE(w.wakeups(), 6u);
}

TEST(WatchdogDeathTest, FiresWhenNothingMovesForTheTimeout) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Watchdog w(0.3, true);
        w.arm("broadcast 1 MiB float");
        std::this_thread::sleep_for(5s);
        std::_Exit(0);
      },
      testing::ExitedWithCode(4), "commbench: timeout: broadcast 1 MiB float made no progress");
}

TEST(WatchdogDeathTest, ProgressInsideALongBatchKeepsItQuiet) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Watchdog w(0.4, true);
        w.arm("long batch");
        std::uint64_t n = 0;
        spin_for(1600ms, [&] {  // four timeouts long, never re-armed
          w.progress(++n);
          std::this_thread::sleep_for(1ms);
        });
        w.disarm();
        std::_Exit(w.wakeups() <= 5 ? 0 : 1);  // one per timeout
      },
      testing::ExitedWithCode(0), "");
}

TEST(WatchdogDeathTest, RearmingInTimeKeepsItQuiet) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Watchdog w(0.3, true);
        w.arm("batches");
        for (int i = 0; i < 8; ++i) {
          std::this_thread::sleep_for(150ms);  // no progress at all, but re-armed in time
          w.rearm();
        }
        w.disarm();
        std::_Exit(0);
      },
      testing::ExitedWithCode(0), "");
}

TEST(WatchdogDeathTest, DisarmedItNeverFires) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Watchdog w(0.1, true);
        w.arm("set-up");
        w.disarm();
        std::this_thread::sleep_for(600ms);
        std::_Exit(0);
      },
      testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace cb
