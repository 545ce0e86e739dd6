#include "report/compare/single_launch.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "common/median.hpp"
#include "common/median_interval.hpp"

namespace cb {

double log_median_se(const MedianWithInterval& m) {
  if (m.low <= 0 || m.high <= m.low || m.samples == 0) return 0;
  const double coverage = median_interval_ranks(m.samples).coverage;
  if (!(coverage > 0 && coverage < 1)) return 0;
  return std::log(m.high / m.low) / (2 * normal_two_sided_z(coverage));
}

namespace {

// Each log median minus the median over the launch's records.
std::vector<double> shape(const std::vector<double>& logs) {
  const double centre = median_of(logs);
  std::vector<double> out;
  for (double x : logs) out.push_back(x - centre);
  return out;
}

}  // namespace

SingleLaunchResult judge_single_launch(const std::vector<SingleLaunchInput>& inputs, double floor,
                                       double confidence) {
  SingleLaunchResult out;
  const std::size_t n = inputs.size();
  out.rows.resize(n);
  if (n == 0) return out;
  std::vector<double> base_logs, new_logs;
  for (const auto& in : inputs) {
    base_logs.push_back(std::log(in.base.p50));
    new_logs.push_back(std::log(in.next.p50));
  }
  const std::vector<double> base_shape = shape(base_logs), new_shape = shape(new_logs);
  std::vector<double> change(n), level(n);
  for (std::size_t k = 0; k < n; ++k) {
    change[k] = new_shape[k] - base_shape[k];
    level[k] = new_logs[k] - base_logs[k];
  }
  double level_sum = 0;
  for (double x : level) level_sum += x;
  out.level = std::exp(level_sum / static_cast<double>(n));
  const double centre = median_of(change);
  std::vector<double> deviation;
  for (double x : change) deviation.push_back(std::abs(x - centre));
  out.scatter = 1.4826 * median_of(deviation);
  out.enough_records = n >= kSingleLaunchMinRecords;

  const double z = normal_two_sided_z(confidence);
  const double log_floor = std::log(floor);
  for (std::size_t k = 0; k < n; ++k) {
    const double se_b = log_median_se(inputs[k].base), se_n = log_median_se(inputs[k].next);
    const double s = std::sqrt(se_b * se_b + se_n * se_n + out.scatter * out.scatter);
    SingleLaunchRow& row = out.rows[k];
    row.ratio = std::exp(change[k]);
    row.low = std::exp(change[k] - z * s);
    row.high = std::exp(change[k] + z * s);
    row.beyond = std::abs(change[k]) > log_floor;
    row.clears = row.low > floor || row.high < 1 / floor;
  }
  // A change that clears the floor counts where a neighbouring size of its series clears it the
  // same way too.
  std::map<std::size_t, std::vector<std::size_t>> series;
  for (std::size_t k = 0; k < n; ++k) series[inputs[k].series].push_back(k);
  for (auto& [id, members] : series) {
    std::stable_sort(members.begin(), members.end(), [&](std::size_t a, std::size_t b) {
      return inputs[a].bytes < inputs[b].bytes;
    });
    for (std::size_t i = 0; i < members.size(); ++i) {
      SingleLaunchRow& row = out.rows[members[i]];
      if (!row.clears || !out.enough_records) continue;
      const bool slower = row.low > floor;
      auto same_way = [&](std::size_t j) {
        const SingleLaunchRow& other = out.rows[members[j]];
        return slower ? other.low > floor : other.high < 1 / floor;
      };
      const bool supported =
          (i > 0 && same_way(i - 1)) || (i + 1 < members.size() && same_way(i + 1));
      if (supported) row.change = slower ? Change::Slower : Change::Faster;
    }
  }
  return out;
}

}  // namespace cb
