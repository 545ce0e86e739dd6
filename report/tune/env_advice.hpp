// tune --env's advice: per measured case and over all of them, whether an environment
// combination is faster than the current environment beyond the noise between launches
// (report/tune/env_verdict), which part of the gain is the environment's and which the algorithm's,
// the one combination --emit-env writes, and that file's text.
#pragma once

#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "common/record.hpp"
#include "report/tune/env_grid.hpp"
#include "report/tune/env_verdict.hpp"
#include "report/tune/tune.hpp"

namespace cb {

// Why a job's results cannot stand for `combination`: a variable that rank 0 did not see with
// its value, or any rank whose value differs; "" when every rank saw it.
std::string verify_combination(const RunMeta& meta, const EnvCombination& combination);

// Each launch's control measurement: combination label ("" the reference) -> launch -> figures.
using EnvControls = std::map<std::string, std::map<int, ControlFigures>>;

// The verdict over every measured case: each launch's figure is the median over the cases of
// the time of that side's best algorithm (the fastest by its median over launches).
// `label` is the combination --emit-env writes, "" to keep the current environment.
struct EnvChoice {
  std::string label;            // the advised combination, else ""
  std::string candidate;        // the combination the verdict is about (the fastest one), "" none
  EnvVerdict verdict;           // candidate against the reference
  double environment_gain = 1;  // reference's best algorithm time / candidate's best
  double algorithm_gain = 1;    // reference's default time / its best algorithm's time
  int cases = 0;
  std::string line;  // the verdict in one line
};

// EnvChoice::line: ADVISE, KEEP or INCONCLUSIVE with the candidate's gain, its bound and the
// launches behind it (for INCONCLUSIVE, why; and the figures where launches were compared).
std::string env_verdict_line(const EnvChoice& c);

// The grid's advice over every combination's records (the reference's env empty; each record's
// launches from launches_of) printed to `out`: the verdict line first, then per case the
// fastest combination's figures; returns --emit-env's choice.
EnvChoice advise_env(const std::vector<ResultRecord>& results, const EnvControls& controls,
                     const TuneOptions& options, std::ostream& out);
// The --emit-env file: the verdict line and the chosen combination's NAME=VALUE lines, values
// quoted for the shell (or why none is written). A sweep that was cut (`cut`: why, e.g. the
// signal) begins with a line saying so and naming the combinations not measured (`unmeasured`),
// and sets nothing.
std::string emit_env_text(const EnvChoice& c, const EnvCombination& combination,
                          const std::string& cut = {},
                          const std::vector<std::string>& unmeasured = {});

}  // namespace cb
