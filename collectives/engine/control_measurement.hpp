// The launch's control measurement (common/launch_control.hpp): what this host's CPUs do right
// now, through no backend. Rank 0 measures at the start, middle and end of its sweep while the
// other ranks sleep in a quiet barrier, so that nothing of commbench's runs beside it.
#pragma once

#include <cstdint>
#include <string>

#include "common/launch_control.hpp"

namespace cb {

class Control;

// The median round trip (ns) of one cache line between two threads pinned to two CPUs this
// process may use (the first two that accept it; unpinned when there are not two), over windows
// of `trips` round trips, bounded to about `budget_ms` in all so that a busy CPU cannot stall it.
double pingpong_round_trip_ns(int trips = 500, int windows = 15, double budget_ms = 25);

// The median time (us) of a fixed chain of dependent integer multiply-adds: what a CPU core
// computes, free of memory and of other cores.
double fixed_compute_us();

// One sample of both, labelled `at`.
ControlSample measure_control(const std::string& at);

// Steal time and load average from /proc: the launch's share of CPU time the hypervisor took
// between start() and finish(), and the 1-minute load average at the start.
class HostLoad {
 public:
  void start();
  void finish(LaunchControl& into) const;

 private:
  std::uint64_t steal_ = 0, total_ = 0;
  double load_ = 0;
};

// All ranks call it; rank 0 measures while the others wait in a quiet barrier.
void sample_control_collectively(Control& control, const std::string& at, LaunchControl& into);

// "" when steady, else one line naming what moved (first and last sample, factor).
std::string control_moved(const LaunchControl& c);

// COMMBENCH_CASE_ORDER_SEED: the seed with which a repetition's cases run in shuffled order
// (`run --repeat` sets it per launch); 0 when unset (plan order).
std::uint64_t case_order_seed();

}  // namespace cb
