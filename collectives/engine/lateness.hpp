// Lateness: when each rank entered each timed call and left it, on a common clock, and what a
// late rank cost the others. This is the idea of Scalasca's wait-state analysis: in a call that
// synchronises, a rank that arrives early waits inside it for the rank it needs, and that wait is
// the delay cost of the rank that arrived late. Which rank a rank needs follows the collective:
// every rank for those that combine every rank's data ("wait at N x N": allreduce, allgather,
// reduce_scatter, alltoall, barrier), the root for those that spread the root's ("late
// broadcast": broadcast, scatter), and, for the root only, every rank for those that collect at
// the root ("early reduce": reduce, gather). Point to point (sendrecv) is not judged.
//
// Every figure of one call is a difference of entries and exits: in-process (lateness_of, for
// tests and as the definition) or over the control channel (measure_lateness), through the same
// steps: each rank's share of the per-call bounds (max-reduced), then its waits (sum-reduced),
// then its own figures.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collectives/catalogue/catalogue.hpp"
#include "collectives/engine/clock_sync.hpp"
#include "collectives/engine/rank_times.hpp"
#include "core/control.hpp"
#include "core/timer.hpp"

namespace cb {

enum class WaitPattern { Everyone, FromRoot, ToRoot, None };

WaitPattern wait_pattern(Collective c);

// One rank's judged calls on the common clock, in microseconds: it entered call k at entry[k],
// left it at exit[k] and entered the next at next[k] (its exit when nothing ran in between).
struct Arrivals {
  std::vector<double> entry, exit, next;
  std::size_t calls() const { return entry.size(); }
};

// One process's figures over a case's judged calls: sums over the calls (means are these over
// `calls`), so that cases and processes add up.
struct RankLateness {
  int rank = 0;                  // the first rank the process drives
  std::uint64_t calls = 0;       // calls judged
  std::uint64_t last_calls = 0;  // calls it entered last of all
  double late_us = 0;            // its entry − the earliest entry
  double wait_us = 0;            // its time in the call before the rank it needed entered
  double caused_us = 0;          // the others' waits at the calls they waited for it
  double time_us = 0;            // its entry to its next entry: all its time
  double between_us = 0;         // its exit to its next entry: its own time between calls
  double late_exit_us = 0;       // its exit − the earliest exit: it left after the first out
  double inside_us = 0;          // the earliest exit − the last entry: the call with all in
  double clock_error_us = 0;     // the most its stamps may be off against rank 0's clock
  // Medians over the calls (a few calls that a descheduled rank made very late move a sum, not
  // these): late_us, between_us, late_exit_us and inside_us per call.
  double median_late_us = 0;
  double median_between_us = 0;
  double median_late_exit_us = 0;
  double median_inside_us = 0;
  bool operator==(const RankLateness&) const = default;
};

// The per-call bounds every rank needs, as one vector to max-reduce over ranks:
// [latest entry | −earliest entry | −earliest exit | the root's entry (FromRoot)], each `calls`
// long. `root_here`: this process drives the root.
std::vector<double> bounds_part(const Arrivals& mine, WaitPattern p, bool root_here);

// This process's wait at each call, in whole nanoseconds (sum-reduced over ranks: the call's
// total wait), given the reduced bounds.
std::vector<std::uint64_t> waits_ns(const Arrivals& mine, const std::vector<double>& bounds,
                                    WaitPattern p, bool root_here);

// This process's figures, given the reduced bounds and the calls' total waits.
RankLateness rank_lateness(int rank, const Arrivals& mine, const std::vector<double>& bounds,
                           const std::vector<std::uint64_t>& total_waits_ns, WaitPattern p,
                           bool root_here, double clock_error_us);

// Every process's figures from every process's arrivals at once (ranks[i] drives rank
// first_ranks[i]; `root` as the case's, -1 where none).
std::vector<RankLateness> lateness_of(const std::vector<Arrivals>& ranks,
                                      const std::vector<int>& first_ranks, int root, WaitPattern p,
                                      const std::vector<double>& clock_errors_us);

// Collective over the control channel: every process's figures, in control-channel order, on
// every process. Every process passes as many calls. Empty for WaitPattern::None.
std::vector<RankLateness> measure_lateness(Control& control, int rank, const Arrivals& mine,
                                           WaitPattern p, bool root_here, double clock_error_us);

// The calls judged from a case's stamped batches, on the common clock: every call but the first
// of each batch (its entry follows the harness's own work between batches, not the previous
// call), each batch's last call ending at its exit. `skew_us` is added to every stamp (a test
// fault's shift of this process's clock, as the clock line saw it), then the line's offset is
// taken off.
Arrivals judged_calls(const std::vector<CallStamps>& batches, const ClockLine& line,
                      double skew_us = 0);

// One case judged: every process's lateness and place, in control-channel order.
struct LatenessCase {
  std::vector<RankLateness> ranks;
  std::vector<RankPlace> places;
};

// One process's figures as text and back (how they travel; every value round-trips).
std::string to_text(const RankLateness& r);
RankLateness rank_lateness_from_text(const std::string& text);

}  // namespace cb
