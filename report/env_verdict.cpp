#include "report/env_verdict.hpp"

#include <algorithm>

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
  }
  v.ratio = judge_launches(ref, cand, {v.floor, confidence, std::max(family, 1)});
  if (v.ratio.change == Change::Inconclusive) {
    v.why = v.ratio.why;
  } else {
    v.outcome = v.ratio.change == Change::Faster ? EnvOutcome::Advised : EnvOutcome::Keep;
  }
  return v;
}

}  // namespace cb
