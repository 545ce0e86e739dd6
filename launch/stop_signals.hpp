// SIGINT, SIGTERM and SIGHUP noted instead of ending the process while an object of this class
// lives, so a parent can stop its children and clean up. The handlers are installed without
// SA_RESTART, so a blocking waitpid returns EINTR and the caller sees the signal; the previous
// handlers come back when the object goes. Objects nest: one made while another lives (a job of
// a sweep) starts with the signal the outer one caught, so a stop between jobs is not lost.
#pragma once

#include <signal.h>

#include <map>

namespace cb {

class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  // The last signal caught, 0 if none.
  int caught() const;
  void clear();

 private:
  std::map<int, struct sigaction> old_;
};

// For a helper thread of a parent: SIGINT, SIGTERM and SIGHUP are delivered to the other threads,
// so that they interrupt the parent's own blocking wait.
void block_stop_signals_in_this_thread();

// Sends `sig` to the process group a child of commbench leads (it called setpgid(0, 0)): a
// launcher, a wrapper script around one, and whatever they started there. Falls back to the
// child alone when it has no group of its own yet.
void stop_process_group(pid_t leader, int sig);

}  // namespace cb
