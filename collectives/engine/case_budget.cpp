#include "collectives/engine/case_budget.hpp"

#include <algorithm>

namespace cb {

double planned_case_seconds(const Case& c, const RunnerOptions& o) {
  const double iteration = 10e-6 + static_cast<double>(c.bytes) / 1e9;
  const double warmup =
      o.warmup ? static_cast<double>(*o.warmup) * iteration : std::max(0.2 * o.budget_s, iteration);
  const double timed = o.iters ? static_cast<double>(*o.iters) * iteration
                               : std::max(o.budget_s, static_cast<double>(o.min_iters) * iteration);
  const double one = warmup + timed + (o.check ? iteration : 0.0);
  return has_twin(c) ? 2 * one : one;  // alltoallv: its uniform twin is measured beside it
}

std::vector<double> planned_seconds(const std::vector<std::vector<Case>>& plans,
                                    const RunnerOptions& o) {
  std::vector<double> out;
  for (const auto& plan : plans) {
    for (const auto& c : plan) out.push_back(planned_case_seconds(c, o));
  }
  return out;
}

}  // namespace cb
