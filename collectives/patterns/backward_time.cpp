#include "collectives/patterns/backward_time.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/units.hpp"

namespace cb {

namespace {

// At most 10^6 s of backward per step, as every other duration commbench takes.
constexpr double kMaxBackwardUs = 1e12;

bool has_input_times(const Model& m) {
  return !m.params.empty() && m.params.front().backward_us.has_value();
}

}  // namespace

ComputeModel compute_model(const std::string& rate_text, const std::string& total_ms_text,
                           const Model& model) {
  if (!rate_text.empty() && !total_ms_text.empty()) {
    usage_error("--backward-us-per-mparam and --backward-ms both set the backward time: give one");
  }
  ComputeModel c;
  if (!rate_text.empty()) {
    c.kind = ComputeModel::Kind::Rate;
    c.value = parse_double(rate_text, "--backward-us-per-mparam");
    if (c.value * static_cast<double>(model.numel()) / 1e6 > kMaxBackwardUs) {
      usage_error("invalid --backward-us-per-mparam '{}': a backward of more than 10^6 s",
                  rate_text);
    }
  } else if (!total_ms_text.empty()) {
    c.kind = ComputeModel::Kind::Total;
    c.value = parse_double(total_ms_text, "--backward-ms") * 1e3;
    if (c.value > kMaxBackwardUs) {
      usage_error("invalid --backward-ms '{}': at most 10^9 ms", total_ms_text);
    }
  } else if (has_input_times(model)) {
    c.kind = ComputeModel::Kind::Input;
  }
  return c;
}

std::vector<double> backward_times(const Model& model, const ComputeModel& compute) {
  std::vector<double> t(model.params.size(), 0.0);
  const bool input = has_input_times(model);
  double weight_sum = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const Param& p = model.params[i];
    switch (compute.kind) {
      case ComputeModel::Kind::None:
        break;
      case ComputeModel::Kind::Input:
        t[i] = p.backward_us.value_or(0);
        break;
      case ComputeModel::Kind::Rate:
        t[i] = compute.value * static_cast<double>(p.numel) / 1e6;
        break;
      case ComputeModel::Kind::Total:
        t[i] = input ? *p.backward_us : static_cast<double>(p.numel);
        weight_sum += t[i];
        break;
    }
  }
  if (compute.kind == ComputeModel::Kind::Total) {
    if (weight_sum <= 0) {  // input times of zero spread nothing: spread by size instead
      weight_sum = 0;
      for (std::size_t i = 0; i < t.size(); ++i) {
        t[i] = static_cast<double>(model.params[i].numel);
        weight_sum += t[i];
      }
    }
    for (double& x : t) x = compute.value * x / weight_sum;
  }
  return t;
}

std::string describe(const ComputeModel& compute) {
  switch (compute.kind) {
    case ComputeModel::Kind::None:
      return "none";
    case ComputeModel::Kind::Input:
      return "the input's backward_us";
    case ComputeModel::Kind::Rate:
      return fmt::format("{:g} us per million parameters", compute.value);
    case ComputeModel::Kind::Total:
      return fmt::format("{} in all", format_time_us(compute.value));
  }
  return "";
}

}  // namespace cb
