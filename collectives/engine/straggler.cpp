#include "collectives/engine/straggler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace cb {

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

std::optional<RankStraggler> judge_straggler(const std::vector<RankTimes>& cases,
                                         const StragglerRule& rule) {
  if (cases.empty()) return std::nullopt;
  std::map<int, int> slowest_in;  // rank -> cases, in rank order
  for (const RankTimes& t : cases) ++slowest_in[t.slowest_rank];
  // The first of the most often slowest, in rank order: the lowest rank on a tie.
  const auto top = std::max_element(slowest_in.begin(), slowest_in.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
  RankStraggler s;
  s.rank = top->first;
  s.slowest_cases = top->second;
  s.cases = static_cast<int>(cases.size());
  std::vector<double> ratios;
  for (const RankTimes& t : cases) {
    if (t.slowest_rank != s.rank) continue;
    if (ratios.empty()) {
      s.host = t.slowest_host;
      s.gpu = t.slowest_gpu;
      s.core = t.slowest_core;
    }
    ratios.push_back(t.median_us > 0 ? t.max_us / t.median_us : 1.0);
  }
  s.ratio = median_of(ratios);
  s.found = s.cases >= rule.min_cases &&
            s.slowest_cases >= rule.min_share * static_cast<double>(s.cases) &&
            s.ratio >= rule.min_ratio;
  return s;
}

std::string straggler_warning(const RankStraggler& s, const StragglerRule& rule) {
  std::string place = s.host;
  if (s.gpu) {
    place += fmt::format(", GPU {}", *s.gpu);
  } else if (s.core) {
    place += fmt::format(", core {}", *s.core);
  }
  return fmt::format(
      "straggler: rank {} ({}) was slowest in {} of {} cases, {:.2f}x the median rank's time "
      "(the median over those cases); beyond noise: slowest in at least {:g}% of {} or more "
      "cases at {:g}x or more; time_us is this rank's time",
      s.rank, place, s.slowest_cases, s.cases, s.ratio, rule.min_share * 100, rule.min_cases,
      rule.min_ratio);
}

}  // namespace cb
