// How long the runner is planned to spend on a case, in seconds: the figure a progress display
// estimates the time left from (it scales the budgets by the pace it observes, so only their
// proportions need to be right).
#pragma once

#include <vector>

#include "collectives/engine/plan.hpp"
#include "collectives/engine/runner.hpp"

namespace cb {

// Adaptive: a fifth of --min-time warming up and at most --min-time timing, but never fewer than
// the minimum iterations; fixed -w/-n: those iterations. An iteration is assumed to take 10 us
// plus the bytes at 1 GB/s; validation adds one. An alltoallv case with a uniform twin counts
// twice.
double planned_case_seconds(const Case& c, const RunnerOptions& o);

// Every case of every plan, in run order.
std::vector<double> planned_seconds(const std::vector<std::vector<Case>>& plans,
                                    const RunnerOptions& o);

}  // namespace cb
