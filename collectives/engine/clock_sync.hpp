// The ranks' clocks on one time line, for lateness (collectives/engine/lateness.hpp): each
// process's steady clock against rank 0's. Processes that read the same clock (one kernel, one
// time namespace) need no estimate: their offset is exactly 0. Others are estimated by ping-pong
// over the control channel, as NTP does: the answer's time against the midpoint of the shortest
// of a few round trips, wrong by at most half that round trip. Pairs are measured along a
// binomial tree, all pairs of a level at once, so n ranks take log2(n) levels and an offset's
// error is the sum along its path to rank 0.
#pragma once

#include <string>
#include <vector>

#include "core/control.hpp"

namespace cb {

// One round trip: sent and back on the asking process's clock, answered on the peer's.
struct RoundTrip {
  double sent_us = 0;
  double answered_us = 0;
  double back_us = 0;
};

// A clock against a reference: offset = its reading − the reference's at the same moment;
// error = the most the offset may be off.
struct ClockOffset {
  double offset_us = 0;
  double error_us = 0;
};

// The estimate from `trips` (at least one): the shortest round trip's answer against its
// midpoint, error half that round trip.
ClockOffset offset_from(const std::vector<RoundTrip>& trips);

// a's offset against b, then b's against c: a's against c (errors add).
ClockOffset compose(const ClockOffset& a_to_b, const ClockOffset& b_to_c);

// Two offsets of one clock, before and after a stretch of time (each at a reading of that
// clock): the offset at any reading in between by linear interpolation (a constant drift),
// its error the larger of the two.
struct ClockLine {
  double before_at_us = 0, after_at_us = 0;
  ClockOffset before, after;
  double offset_at(double at_us) const;
  double error_us() const;
};

// A binomial tree over n ranks, as levels of disjoint (parent, child) pairs: a parent's own
// pair to rank 0 is always in an earlier level.
struct TreeEdge {
  int parent = 0;
  int child = 0;
};
std::vector<std::vector<TreeEdge>> clock_tree(int n);

// What identifies the clock this process reads: equal strings, the same steady clock (the
// kernel's boot id and this time namespace's monotonic offset).
std::string clock_identity();

// The run's clocks: who shares rank 0's, and the collective measurement of the others.
class ClockSync {
 public:
  // `identities`: every process's clock_identity(), in control-channel order. `skew_us`: a
  // test fault's shift of this process's clock (also in its identity, so it is estimated).
  ClockSync(Control& control, std::vector<std::string> identities, double skew_us = 0);

  // This process's clock as lateness reads it: the steady clock, microseconds since its epoch.
  double now_us() const;
  double skew_us() const { return skew_us_; }
  // Whether every process reads rank 0's clock (nothing to measure).
  bool shared() const { return shared_; }
  // Collective: this process's offset against rank 0 now (exactly 0 where clocks are shared).
  ClockOffset measure();

  static constexpr int kRoundTrips = 8;

 private:
  Control& control_;
  std::vector<std::string> identities_;
  double skew_us_ = 0;
  bool shared_ = true;
};

}  // namespace cb
