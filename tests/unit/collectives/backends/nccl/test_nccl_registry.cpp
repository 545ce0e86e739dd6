// The communicator registry with a stand-in for ncclCommAbort: the watchdog's abort waits for
// the main thread's NCCL call to finish, the main thread parks once an abort has begun, an abort
// still happens when the main thread is stuck inside NCCL, and the abort waits for the streams.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "collectives/backends/nccl/comm_registry.hpp"

namespace cb::nccl {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::atomic<int> g_aborted{0};
std::atomic<std::int64_t> g_aborted_at{0};  // steady-clock ticks of the last abort

int fake_abort(Comm) {
  g_aborted_at.store(Clock::now().time_since_epoch().count());
  ++g_aborted;
  return 0;
}

struct Parked {};

Comm fake_comm(std::uintptr_t n) {
  return reinterpret_cast<Comm>(n);
}

class Registry : public ::testing::Test {
 protected:
  void SetUp() override {
    g_aborted = 0;
    g_aborted_at = 0;
  }
  std::shared_ptr<CommRegistry> registry_ =
      std::make_shared<CommRegistry>(fake_abort, [] { throw Parked{}; });
};

TEST_F(Registry, AbortWaitsForTheCallInProgress) {
  registry_->add(fake_comm(1));
  registry_->add(fake_comm(2));
  std::atomic<std::int64_t> released{0};
  std::atomic<bool> holding{false};
  std::thread main_thread([&] {
    auto use = registry_->use();
    holding = true;
    std::this_thread::sleep_for(300ms);  // "inside ncclCommGetAsyncError"
    released = Clock::now().time_since_epoch().count();
  });
  while (!holding) std::this_thread::yield();
  registry_->abort_all(5s);
  main_thread.join();
  EXPECT_EQ(g_aborted, 2);
  EXPECT_GE(g_aborted_at.load(), released.load());
}

TEST_F(Registry, MainThreadParksOnceAborting) {
  registry_->add(fake_comm(1));
  registry_->abort_all(1s);
  EXPECT_TRUE(registry_->aborting());
  EXPECT_THROW((void)registry_->use(), Parked);
}

TEST_F(Registry, RemovedCommunicatorsAreNotAborted) {
  registry_->add(fake_comm(1));
  registry_->add(fake_comm(2));
  registry_->remove(fake_comm(1));
  registry_->abort_all(1s);
  EXPECT_EQ(g_aborted, 1);
}

// A main thread blocked inside NCCL holds use() for ever: the abort goes ahead after half the
// limit (that abort is what ends the blocked call) and abort_all returns within the limit.
TEST_F(Registry, StuckCallIsAbortedAfterHalfTheLimit) {
  registry_->add(fake_comm(1));
  std::atomic<bool> holding{false}, stop{false};
  std::thread main_thread([&] {
    auto use = registry_->use();
    holding = true;
    while (!stop) std::this_thread::sleep_for(5ms);
  });
  while (!holding) std::this_thread::yield();
  const auto t0 = Clock::now();
  registry_->abort_all(600ms);
  const auto took = Clock::now() - t0;
  EXPECT_EQ(g_aborted, 1);
  EXPECT_GE(took, 250ms);
  EXPECT_LT(took, 3s);
  stop = true;
  main_thread.join();
}

// The abort waits until the streams are idle (a non-blocking ncclCommAbort returns at once).
TEST_F(Registry, AbortWaitsForTheStreamsToDrain) {
  std::atomic<int> polls{0};
  registry_->add(fake_comm(1), [&] { return ++polls >= 20; });
  registry_->abort_all(5s);
  EXPECT_EQ(g_aborted, 1);
  EXPECT_GE(polls.load(), 20);
}

}  // namespace
}  // namespace cb::nccl
