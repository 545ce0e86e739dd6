#include "collectives/patterns/step_figures.hpp"

#include <algorithm>
#include <utility>

#include "common/median.hpp"

namespace cb {

double communication_us(const StepTimeline& t) {
  std::vector<std::pair<double, double>> spans;
  for (std::size_t i = 0; i < t.start_us.size() && i < t.end_us.size(); ++i) {
    spans.emplace_back(t.start_us[i], std::max(t.start_us[i], t.end_us[i]));
  }
  std::sort(spans.begin(), spans.end());
  double total = 0, open = 0, close = 0;
  bool any = false;
  for (const auto& [s, e] : spans) {
    if (!any || s > close) {
      if (any) total += close - open;
      open = s;
      close = e;
      any = true;
    } else {
      close = std::max(close, e);
    }
  }
  if (any) total += close - open;
  return total;
}

double exposed_us(double step_us, double compute_us) {
  return step_us - compute_us;
}

std::optional<double> overlap_efficiency(double exposed, double comm) {
  if (comm <= 0) return std::nullopt;
  return 1 - exposed / comm;
}

void summarize_steps(const StepProgram& program, const std::vector<StepTimeline>& steps,
                     ReplayRecord& out) {
  auto median = [&](auto figure) {
    std::vector<double> v;
    for (const auto& s : steps) v.push_back(figure(s));
    return median_of(std::move(v));
  };
  std::vector<double> step;
  for (const auto& s : steps) step.push_back(s.step_us);
  out.steps = static_cast<int>(steps.size());
  out.step_us = median_of(step);
  out.step_min_us = step.empty() ? 0 : *std::min_element(step.begin(), step.end());
  out.step_max_us = step.empty() ? 0 : *std::max_element(step.begin(), step.end());
  out.compute_us = median([](const StepTimeline& s) { return s.compute_us; });
  out.comm_us = median([](const StepTimeline& s) { return communication_us(s); });
  out.exposed_us =
      median([](const StepTimeline& s) { return exposed_us(s.step_us, s.compute_us); });
  // Without compute nothing can hide: the step's own host overhead beyond the collectives' time
  // would read as a large negative share, so there is no overlap to report. The program's
  // planned compute decides, not the measured one, which a GPU's empty spin kernel makes > 0.
  out.overlap =
      program.compute_us() > 0 ? overlap_efficiency(out.exposed_us, out.comm_us) : std::nullopt;
  out.ops.clear();
  for (std::size_t i = 0; i < program.ops.size(); ++i) {
    const StepOp& op = program.ops[i];
    ReplayOpRecord r;
    r.index = static_cast<int>(i);
    r.collective = std::string(name(op.collective));
    r.dtype = std::string(info(op.dtype).name);
    r.phase = op.phase;
    r.label = op.label;
    r.tensors = op.tensors;
    r.params = op.params;
    r.count = op.count;
    r.bytes = op.bytes;
    r.start_us = median([i](const StepTimeline& s) { return s.start_us.at(i); });
    r.end_us = median([i](const StepTimeline& s) { return s.end_us.at(i); });
    r.time_us = median([i](const StepTimeline& s) { return s.end_us.at(i) - s.start_us.at(i); });
    out.ops.push_back(std::move(r));
  }
}

}  // namespace cb
