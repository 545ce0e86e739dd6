#include "report/replay/replay_verdict.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/median.hpp"
#include "common/units.hpp"
#include "report/tune/env_verdict.hpp"

namespace cb {

ReplayRecord summarize_launches(const std::vector<ReplayRecord>& launches) {
  ReplayRecord s = launches.front();
  s.repeat.reset();
  s.launches = launches;
  auto median = [&](auto figure) {
    std::vector<double> v;
    for (const auto& l : launches) v.push_back(figure(l));
    return median_of(std::move(v));
  };
  s.step_us = median([](const ReplayRecord& r) { return r.step_us; });
  s.step_min_us = median([](const ReplayRecord& r) { return r.step_min_us; });
  s.step_max_us = median([](const ReplayRecord& r) { return r.step_max_us; });
  s.compute_us = median([](const ReplayRecord& r) { return r.compute_us; });
  s.comm_us = median([](const ReplayRecord& r) { return r.comm_us; });
  s.exposed_us = median([](const ReplayRecord& r) { return r.exposed_us; });
  // Without compute every launch's overlap is empty (nothing to hide behind), and so is theirs.
  s.overlap = s.comm_us > 0 && launches.front().overlap
                  ? std::optional<double>(1 - s.exposed_us / s.comm_us)
                  : std::nullopt;
  s.steps = 0;
  for (const auto& l : launches) s.steps += l.steps;
  s.wrong.reset();
  for (const auto& l : launches) {
    if (l.wrong) s.wrong = s.wrong.value_or(0) + *l.wrong;
  }
  for (std::size_t i = 0; i < s.ops.size(); ++i) {
    auto op_median = [&](auto figure) {
      return median([&](const ReplayRecord& r) { return figure(r.ops.at(i)); });
    };
    s.ops[i].start_us = op_median([](const ReplayOpRecord& o) { return o.start_us; });
    s.ops[i].end_us = op_median([](const ReplayOpRecord& o) { return o.end_us; });
    s.ops[i].time_us = op_median([](const ReplayOpRecord& o) { return o.time_us; });
  }
  return s;
}

double reference_cap(const std::vector<double>& caps_mb) {
  if (caps_mb.empty()) return 0;
  for (double c : caps_mb) {
    if (c == 25) return c;
  }
  return caps_mb.front();
}

namespace {

EnvLaunches launches_of(const ReplayRecord& r, const std::map<int, ControlFigures>& control) {
  EnvLaunches out;
  const std::vector<ReplayRecord> one = {r};
  for (const auto& l : r.launches.empty() ? one : r.launches) {
    out.times.push_back(l.step_us);
    auto it = l.repeat ? control.find(*l.repeat) : control.end();
    out.control.push_back(it == control.end() ? ControlFigures{} : it->second);
  }
  return out;
}

std::string time_text(double us) {
  return format_time_us(us);
}

}  // namespace

std::vector<ReplayVerdict> judge_bucket_caps(const std::vector<ReplayRecord>& summaries,
                                             const std::map<int, ControlFigures>& control,
                                             double min_gain) {
  std::vector<std::string> backends;
  for (const auto& r : summaries) {
    if (r.bucket_cap_mb &&
        std::find(backends.begin(), backends.end(), r.backend) == backends.end()) {
      backends.push_back(r.backend);
    }
  }
  std::vector<ReplayVerdict> out;
  for (const auto& backend : backends) {
    std::vector<const ReplayRecord*> mine;
    std::vector<double> caps;
    for (const auto& r : summaries) {
      if (r.backend == backend && r.bucket_cap_mb) {
        mine.push_back(&r);
        caps.push_back(*r.bucket_cap_mb);
      }
    }
    if (mine.size() < 2) continue;
    const double ref_cap = reference_cap(caps);
    const ReplayRecord* ref = nullptr;
    const ReplayRecord* best = nullptr;
    for (const ReplayRecord* r : mine) {
      if (*r->bucket_cap_mb == ref_cap && !ref) {
        ref = r;
      } else if (!best || r->step_us < best->step_us) {
        best = r;
      }
    }
    const int family = static_cast<int>(mine.size()) - 1;
    const EnvVerdict v =
        judge_env(launches_of(*ref, control), launches_of(*best, control), min_gain, family);
    ReplayVerdict out_v;
    out_v.backend = backend;
    out_v.reference_cap_mb = ref_cap;
    out_v.candidate_cap_mb = *best->bucket_cap_mb;
    out_v.outcome = env_outcome_name(v.outcome);
    out_v.chosen_cap_mb = v.outcome == EnvOutcome::Advised ? out_v.candidate_cap_mb : ref_cap;
    const std::string exposed = fmt::format(
        "exposed communication per step {} at {:g} MiB against {} at {:g} MiB",
        time_text(best->exposed_us), out_v.candidate_cap_mb, time_text(ref->exposed_us), ref_cap);
    const std::string what =
        fmt::format("the step at {:g} MiB, the fastest other cap,", out_v.candidate_cap_mb);
    if (v.outcome == EnvOutcome::Advised) {
      out_v.line = fmt::format(
          "ADVISE --bucket-cap-mb {:g} on {}: {} is {} than at {:g} MiB: beyond the floor and the "
          "noise between launches ({})",
          out_v.candidate_cap_mb, backend, what, env_gain_text(v), ref_cap, exposed);
    } else if (v.outcome == EnvOutcome::Inconclusive) {
      out_v.line = fmt::format(
          "INCONCLUSIVE, keep --bucket-cap-mb {:g} on {}: {} could not be judged against {:g} "
          "MiB: {}{} ({})",
          ref_cap, backend, what, ref_cap, v.why, v.ratio.low > 0 ? ": " + env_gain_text(v) : "",
          exposed);
    } else {
      out_v.line = fmt::format(
          "KEEP --bucket-cap-mb {:g} on {}: {} is {} than at {:g} MiB: not beyond the floor and "
          "the noise between launches ({})",
          ref_cap, backend, what, env_gain_text(v), ref_cap, exposed);
    }
    out.push_back(std::move(out_v));
  }
  return out;
}

}  // namespace cb
