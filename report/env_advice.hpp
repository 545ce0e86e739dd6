// tune --env's advice: which environment combination and algorithm to use per size range, the
// one combination --emit-env writes, and that file's text.
#pragma once

#include <iosfwd>
#include <set>
#include <string>
#include <vector>

#include "common/record.hpp"
#include "report/env_grid.hpp"
#include "report/tune.hpp"

namespace cb {

// Why a job's results cannot stand for `combination`: a variable that rank 0 did not see with
// its value, or any rank whose value differs; "" when every rank saw it.
std::string verify_combination(const RunMeta& meta, const EnvCombination& combination);

// --emit-env's choice: among the combinations the advice chose for some size range (the
// noise-aware rule), the one whose default-algorithm results beat the baseline's by the best
// geometric-mean speedup over every measured case (validated results only). Empty when none
// was chosen or none beats it by more than the minimum gain.
struct EnvChoice {
  std::string label;
  double speedup = 1;
  int cases = 0;
};

// The grid's advice over every combination's results (the baseline's env empty) printed to
// `out`, with a note when the best combination differs by size range; returns --emit-env's
// choice.
EnvChoice advise_env(const std::vector<ResultRecord>& results, const TuneOptions& options,
                     std::ostream& out);
// The --emit-env file: the chosen combination's NAME=VALUE lines (or why none), commented.
std::string emit_env_text(const EnvChoice& c, const EnvCombination& combination);

}  // namespace cb
