// Per-iteration timing. The host timer reads the CPU's time-stamp counter after each iteration
// (about 10 ns, against 24 ns for steady_clock on this class of machine) and scales the ticks by
// the steady clock read at start and stop, so no separate calibration is needed. The GPU event
// timer (collectives/backends/nccl/event_timer.hpp) records an event per mark.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace cb {

// When each iteration entered its call and left it, on this host's steady clock (microseconds
// since its epoch), for lateness (collectives/engine/lateness.hpp): one value per iteration each.
struct CallStamps {
  std::vector<double> entry;
  std::vector<double> exit;
  double error_us = 0;  // how far these may sit from the steady clock (0 on the host timer)
};

class IterationTimer {
 public:
  virtual ~IterationTimer() = default;
  virtual void reserve(std::size_t iterations) = 0;
  virtual void start() = 0;
  virtual void mark() = 0;  // after each iteration is issued
  virtual void stop() = 0;  // after everything issued has completed
  // Microseconds per iteration, in order, for the iterations since start().
  virtual std::vector<double> samples_us() = 0;
  // Total microseconds from start() to stop().
  virtual double elapsed_us() = 0;
  // Whether start()/stop() alone time a batch on the host clock, so a batch may go without
  // mark() (GPU event timers time the stream and need their marks).
  virtual bool times_batches_alone() const { return false; }
  // Whether a mark() costs host time that would show in time_us at any size (a GPU event
  // record per iteration, and a device switch per GPU with several), so that batches for
  // time_us always go without marks, each beside a stamped twin for the samples.
  virtual bool marks_always_show() const { return false; }

  // Lateness. A mark() is the call's exit and, where nothing runs before the next call, that
  // call's entry; where something does (the test fault standing for a data loader), enter()
  // before the call stamps its entry. Timers whose calls may start later than they are issued
  // (a GPU stream that waits for the host) stamp every entry: needs_entries().
  virtual void enter() {}
  virtual bool needs_entries() const { return false; }
  // The stamped iterations since start(), on the steady clock; empty where this batch has none
  // per iteration (no marks, or more iterations than the timer keeps apart).
  virtual CallStamps call_stamps() { return {}; }
};

std::unique_ptr<IterationTimer> make_host_timer();

}  // namespace cb
