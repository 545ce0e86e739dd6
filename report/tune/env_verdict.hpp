// tune --env's decision on one combination against the reference (the environment as it is):
// the launch is the sample, as in compare. Each side's per-launch figures (times), the control
// gate over the launches, then compare's ratio test (report/launch_statistics) with tune's gain
// as the effect floor: a combination is advised only where it is faster beyond launch-to-launch
// noise.
#pragma once

#include <string>
#include <vector>

#include "report/launch_statistics.hpp"

namespace cb {

// One side's launches: a figure per launch (a time; larger is slower) and, aligned with it,
// that launch's control measurement (unknown when not recorded).
struct EnvLaunches {
  std::vector<double> times;
  std::vector<ControlFigures> control;
};

enum class EnvOutcome {
  Advised,      // faster than the reference beyond the floor and the noise between launches
  Keep,         // not: keep the current environment
  Inconclusive  // cannot be judged: the control moved between launches (so that too few
                // agreed, or those that did leave a gain beyond the floor possible), or too
                // few launches
};
const char* env_outcome_name(EnvOutcome o);  // "advised", "keep", "inconclusive"

struct EnvVerdict {
  EnvOutcome outcome = EnvOutcome::Inconclusive;
  RatioVerdict ratio;  // candidate / reference, over the launches the control gate kept
  double floor = 1;    // the smallest gain that counts (1 + the minimum gain)
  std::string why;     // for Inconclusive: what was missing or what moved
};

// At least this many launches a side must agree in their control measurement.
inline constexpr int kEnvMatchedLaunches = 2;

// The candidate against the reference: where both sides have every launch's control, only the
// launches whose controls agree (match_control) are compared, and a mismatch is inconclusive;
// then judge_launches at `confidence` over a family of `family` comparisons, with the floor
// 1 + min_gain. Advised when the whole interval of the time ratio lies below 1 / floor; kept
// otherwise, unless the gate left launches out and the interval still reaches below 1 / floor
// (inconclusive: what the gate kept cannot rule the gain out).
EnvVerdict judge_env(const EnvLaunches& reference, const EnvLaunches& candidate, double min_gain,
                     int family, double confidence = 0.99);

// A gain as text: two decimals, three significant digits beyond 100 or below 0.1 ("1.15x").
std::string gain_x_text(double gain);
// The candidate's gain (reference time / candidate time) with its bounds ("1.08x-1.22x"), "-"
// where there are none.
std::string gain_bound_text(const EnvVerdict& v);
// "1.15x faster (its gain's 99 % bound 1.08x-1.22x over 5 v 5 launches, floor 1.02x)".
std::string env_gain_text(const EnvVerdict& v);

}  // namespace cb
