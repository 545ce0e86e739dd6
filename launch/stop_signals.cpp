#include "launch/stop_signals.hpp"

#include <unistd.h>

namespace cb {

namespace {

volatile sig_atomic_t g_stop_signal = 0;
int g_depth = 0;  // StopSignals alive: an inner one keeps what the outer one caught

void on_stop_signal(int sig) {
  g_stop_signal = sig;
}

}  // namespace

StopSignals::StopSignals() {
  if (g_depth++ == 0) g_stop_signal = 0;
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaction(s, &sa, &old_[s]);
}

StopSignals::~StopSignals() {
  for (auto& [s, act] : old_) sigaction(s, &act, nullptr);
  --g_depth;
}

int StopSignals::caught() const {
  return g_stop_signal;
}

void StopSignals::clear() {
  g_stop_signal = 0;
}

void stop_process_group(pid_t leader, int sig) {
  if (::getpgid(leader) != leader || ::kill(-leader, sig) != 0) ::kill(leader, sig);
}

void block_stop_signals_in_this_thread() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&set, s);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

}  // namespace cb
