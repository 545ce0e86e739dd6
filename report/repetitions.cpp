#include "report/repetitions.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "report/launch_statistics.hpp"
#include "report/record_key.hpp"

namespace cb {

namespace {

template <typename F>
double median_by(const std::vector<ResultRecord>& g, F figure) {
  std::vector<double> v;
  for (const auto& r : g) v.push_back(figure(r));
  return median_of(std::move(v));
}

template <typename F>
std::optional<double> optional_median(const std::vector<ResultRecord>& g, F figure) {
  std::vector<double> v;
  for (const auto& r : g) {
    if (auto x = figure(r)) v.push_back(*x);
  }
  if (v.empty()) return std::nullopt;
  return median_of(std::move(v));
}

}  // namespace

ResultRecord summarize_repetitions(const std::vector<ResultRecord>& group) {
  ResultRecord s = group.front();
  s.repeat.reset();
  s.rank_time.reset();  // each launch keeps its own: a slowest rank is one launch's
  s.lateness.reset();   // likewise: lateness is one launch's
  s.repeats = group;
  for (auto& r : s.repeats) r.repeats.clear();
  s.iters = static_cast<std::uint64_t>(
      std::llround(median_by(group, [](const auto& r) { return static_cast<double>(r.iters); })));
  s.time_us = median_by(group, [](const auto& r) { return r.time_us; });
  s.min_us = median_by(group, [](const auto& r) { return r.min_us; });
  s.p50_us = median_by(group, [](const auto& r) { return r.p50_us; });
  s.p99_us = median_by(group, [](const auto& r) { return r.p99_us; });
  s.max_us = median_by(group, [](const auto& r) { return r.max_us; });
  s.cv = median_by(group, [](const auto& r) { return r.cv; });
  s.algbw_GBps = optional_median(group, [](const auto& r) { return r.algbw_GBps; });
  s.busbw_GBps = optional_median(group, [](const auto& r) { return r.busbw_GBps; });
  s.fault_bytes = optional_median(group, [](const auto& r) { return r.fault_bytes; });
  // The summary's slow iterations are the launches': their cause where most launches name it.
  std::map<std::string, std::size_t> causes;
  for (const auto& r : group) ++causes[r.outlier_cause];
  s.outlier_cause.clear();
  for (const auto& [cause, n] : causes) {
    if (shows_slow_calls(s) && !cause.empty() && 2 * n > group.size()) s.outlier_cause = cause;
  }
  s.imbalance_tax = optional_median(group, [](const auto& r) { return r.imbalance_tax; });
  s.uniform_us = optional_median(group, [](const auto& r) { return r.uniform_us; });
  s.p50_low_us = optional_median(group, [](const auto& r) { return r.p50_low_us; });
  s.p50_high_us = optional_median(group, [](const auto& r) { return r.p50_high_us; });
  s.wrong.reset();
  for (const auto& r : group) {
    if (r.wrong) s.wrong = s.wrong.value_or(0) + *r.wrong;
  }
  return s;
}

std::vector<ResultRecord> summarize_all(const std::vector<ResultRecord>& records) {
  std::map<RecordKey, std::size_t> index;
  std::vector<std::vector<ResultRecord>> groups;
  for (const auto& r : records) {
    auto [it, fresh] = index.emplace(key_of(r), groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(r);
  }
  std::vector<ResultRecord> out;
  for (const auto& g : groups) out.push_back(summarize_repetitions(g));
  return out;
}

std::vector<ResultRecord> launches_of(const ResultRecord& r) {
  if (r.repeats.empty()) return {r};
  return r.repeats;
}

}  // namespace cb
