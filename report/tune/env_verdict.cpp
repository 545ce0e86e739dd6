#include "report/tune/env_verdict.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/launch_control.hpp"

namespace cb {

namespace {

bool all_known(const EnvLaunches& side) {
  return side.control.size() == side.times.size() &&
         std::all_of(side.control.begin(), side.control.end(),
                     [](const ControlFigures& c) { return c.known(); });
}

std::vector<double> pick(const std::vector<double>& v, const std::vector<std::size_t>& idx) {
  std::vector<double> out;
  for (auto i : idx) out.push_back(v[i]);
  return out;
}

}  // namespace

const char* env_outcome_name(EnvOutcome o) {
  switch (o) {
    case EnvOutcome::Advised:
      return "advised";
    case EnvOutcome::Keep:
      return "keep";
    default:
      return "inconclusive";
  }
}

EnvVerdict judge_env(const EnvLaunches& reference, const EnvLaunches& candidate, double min_gain,
                     int family, double confidence) {
  EnvVerdict v;
  v.floor = 1 + min_gain;
  std::vector<double> ref = reference.times, cand = candidate.times;
  bool gate_left_out = false;
  if (all_known(reference) && all_known(candidate)) {
    ControlMatch m = match_control(reference.control, candidate.control, kPingpongTolerance,
                                   kComputeTolerance, kEnvMatchedLaunches);
    if (!m.matched) {
      v.why = "the control measurement moved between launches: " + m.why;
      v.ratio.reference_launches = static_cast<int>(ref.size());
      v.ratio.candidate_launches = static_cast<int>(cand.size());
      return v;
    }
    ref = pick(ref, m.reference);
    cand = pick(cand, m.candidate);
    gate_left_out = ref.size() < reference.times.size() || cand.size() < candidate.times.size();
  }
  v.ratio = judge_launches(ref, cand, {v.floor, confidence, std::max(family, 1)});
  if (v.ratio.change == Change::Inconclusive) {
    v.why = v.ratio.why;
    return v;
  }
  // The gate left launches out (the machine changed mode during the sweep) and those it kept do
  // not rule out a gain beyond the floor: too few to say "keep", as too few to advise.
  if (gate_left_out && v.ratio.change != Change::Faster && v.ratio.low < 1 / v.floor) {
    v.why = fmt::format(
        "the control measurement moved between launches: {} of {} launches and {} of {} of the "
        "current environment agreed, too few to decide",
        cand.size(), candidate.times.size(), ref.size(), reference.times.size());
    return v;
  }
  v.outcome = v.ratio.change == Change::Faster ? EnvOutcome::Advised : EnvOutcome::Keep;
  return v;
}

std::string gain_x_text(double gain) {
  return gain < 100 && gain >= 0.1 ? fmt::format("{:.2f}x", gain) : fmt::format("{:.3g}x", gain);
}

// Beyond a factor of 1000 either way a bound says only that the launches were too few or too
// scattered to bound the gain (2 v 2 launches give t's 99 % quantile at 1 degree of freedom).
std::string gain_bound_text(const EnvVerdict& v) {
  if (v.ratio.low <= 0 || v.ratio.high <= 0) return "-";
  const double least = 1 / v.ratio.high, most = 1 / v.ratio.low;
  if (least < 1e-3 || most > 1e3) return "unbounded: beyond 0.001x-1000x";
  return gain_x_text(least) + "-" + gain_x_text(most);
}

std::string env_gain_text(const EnvVerdict& v) {
  const double gain = 1 / v.ratio.ratio;
  return fmt::format("{} {} (its gain's 99 % bound {} over {} v {} launches, floor {})",
                     gain_x_text(gain >= 1 ? gain : 1 / gain), gain >= 1 ? "faster" : "slower",
                     gain_bound_text(v), v.ratio.candidate_launches, v.ratio.reference_launches,
                     gain_x_text(v.floor));
}

}  // namespace cb
