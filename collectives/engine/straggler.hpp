// A straggling rank over a run's cases: the rank the others wait for. Each case's lateness
// (collectives/engine/lateness.hpp) says, call by call, who entered last and what the others'
// waiting cost; a straggler is the rank (or the host, when all its ranks enter late together)
// that entered last in most calls, caused a share of the others' time beyond noise, and was late
// by more than the clocks can be trusted (docs/method.md#a-straggling-rank). Pure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collectives/engine/lateness.hpp"
#include "collectives/engine/rank_times.hpp"
#include "common/record.hpp"

namespace cb {

// When the rank the others wait for the most is a straggler rather than noise.
struct StragglerRule {
  std::uint64_t min_calls = 20;  // judged calls, over every case, needed to judge
  // It entered last in at least halfway between its fair share (1 in n) and every call: 5 in 8
  // of 4 ranks, 3 in 4 of 2 (ranks that take turns arriving last are noise).
  // The others' wait it caused, over the others' time: at least this.
  double min_delay_cost = 0.10;
  // Its mean late arrival over the clock error between it and the others: more than this.
  double clock_margin = 2;
  // A host's ranks are late together when each is late by at least this share of the latest.
  double together = 0.5;
  // Lateness is before the call when the rank's own time between calls (beyond the others') is
  // at least this share of what the others waited for it per call; otherwise it comes from
  // inside the previous call: the rank left it after the others.
  double before_share = 0.5;
  // Leaving a call after the others is also the collective's own order of finishing (a ring's
  // last hop, a tree's leaves), the same rank call after call. So lateness from inside the call
  // names a rank only when it cost the others the most in at least `min_case_share` of at least
  // `min_cases_inside` cases, and left the calls later than the call itself takes once every
  // rank is in (medians).
  int min_cases_inside = 4;
  double min_case_share = 0.75;
};

// The share of the calls a rank (or a host) must enter last among `n` ranks (or hosts).
double last_share_needed(int n);

// The record's summary of a case: the rank that cost the others the most waiting. Empty when
// nothing was judged.
std::optional<CaseLateness> case_lateness(const LatenessCase& c);

// The judgement over `cases` (any order; cases with no judged calls are left out): the rank
// that cost the others the most waiting, its figures, and whether `rule` holds for it or for its
// host. Empty when no case has judged calls.
std::optional<RankStraggler> judge_straggler(const std::vector<LatenessCase>& cases,
                                             const StragglerRule& rule = {});

// run's warning line for a straggler found, without the "commbench: warning: " prefix.
std::string straggler_warning(const RankStraggler& s, const StragglerRule& rule = {});

}  // namespace cb
