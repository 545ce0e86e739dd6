// A straggling rank over a run's cases: the rank that is the slowest in most cases, by a margin
// that a healthy run does not reach (docs/method.md#a-straggling-rank). Pure: it reads the
// per-rank times each case already has (rank_times.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/record.hpp"

namespace cb {

// When the most often slowest rank is a straggler rather than noise.
struct StragglerRule {
  int min_cases = 8;        // cases with more than one rank needed to judge
  double min_share = 0.75;  // of them, the share in which it must be the slowest
  double min_ratio = 1.1;   // its time over the median rank's, the median over those cases
};

// The judgement over `cases` (one per case with more than one rank, any order): the rank that
// was the slowest in the most cases (the lowest of equally often slowest ones), its place, and
// whether `rule` holds. Empty when there are no cases.
std::optional<RankStraggler> judge_straggler(const std::vector<RankTimes>& cases,
                                         const StragglerRule& rule = {});

// run's warning line for a straggler found, without the "commbench: warning: " prefix.
std::string straggler_warning(const RankStraggler& s, const StragglerRule& rule = {});

}  // namespace cb
