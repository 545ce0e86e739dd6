#include "collectives/backends/nccl/comm_registry.hpp"

#include <algorithm>
#include <future>
#include <memory>
#include <thread>

namespace cb::nccl {

using namespace std::chrono_literals;

CommRegistry::CommRegistry(CommFn abort, std::function<void()> park)
    : abort_(abort), park_(std::move(park)) {}

void CommRegistry::add(Comm c, std::function<bool()> idle) {
  std::lock_guard lock(list_mu_);
  comms_.push_back({c, std::move(idle)});
}

void CommRegistry::remove(Comm c) {
  std::lock_guard lock(list_mu_);
  std::erase_if(comms_, [c](const Entry& e) { return e.comm == c; });
}

std::unique_lock<std::recursive_timed_mutex> CommRegistry::use() {
  std::unique_lock lock(use_mu_);
  if (aborting()) {
    lock.unlock();
    park();
  }
  return lock;
}

void CommRegistry::park() const {
  if (park_) park_();
  for (;;) std::this_thread::sleep_for(1s);
}

void CommRegistry::abort_all(std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  aborting_.store(true);
  // The lock is taken on a helper thread and released there once the abort is done, so a
  // main thread stuck inside NCCL cannot hold the watchdog past `limit`.
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> finished = done->get_future();
  std::thread([self = shared_from_this(), limit, deadline, done] {
    CommRegistry& r = *self;
    std::unique_lock lock(r.use_mu_, std::defer_lock);
    (void)lock.try_lock_for(limit / 2);
    std::vector<Entry> comms;
    {
      std::lock_guard list(r.list_mu_);
      comms.swap(r.comms_);
    }
    for (const Entry& e : comms) r.abort_(e.comm);
    for (const Entry& e : comms) {
      while (e.idle && !e.idle() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(1ms);
      }
    }
    done->set_value();
  }).detach();
  finished.wait_until(deadline);
}

}  // namespace cb::nccl
