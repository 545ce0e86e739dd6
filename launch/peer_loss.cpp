#include "launch/peer_loss.hpp"

#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include "common/temp_files.hpp"

namespace cb {

namespace {

struct State {
  std::mutex mu;
  std::condition_variable cv;
  std::string cause;
  bool watched = false;
  bool main_reports = false;
  bool watcher_prints = false;
};

State& state() {
  static State* s = new State;  // never destroyed: watcher threads may outlive static teardown
  return *s;
}

}  // namespace

void report_peer_loss(const std::string& line) {
  State& s = state();
  {
    std::lock_guard lock(s.mu);
    if (s.cause.empty()) s.cause = line;
    s.cv.notify_all();
    if (s.main_reports || s.watcher_prints) return;
    s.watcher_prints = true;
  }
  std::fprintf(stderr, "commbench: %s\n", line.c_str());
  std::fflush(stderr);
  remove_temp_files();
  ::_exit(1);
}

void expect_peer_loss_reports() {
  std::lock_guard lock(state().mu);
  state().watched = true;
}

void wait_for_peer_loss(std::chrono::milliseconds wait) {
  State& s = state();
  std::unique_lock lock(s.mu);
  if (s.watched) s.cv.wait_for(lock, wait, [&] { return !s.cause.empty(); });
}

std::string failure_cause(std::chrono::milliseconds wait) {
  State& s = state();
  std::unique_lock lock(s.mu);
  if (s.watcher_prints) {
    lock.unlock();
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
  }
  s.main_reports = true;
  if (s.watched) s.cv.wait_for(lock, wait, [&] { return !s.cause.empty(); });
  return s.cause;
}

}  // namespace cb
