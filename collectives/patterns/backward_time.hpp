// The backward pass's compute time per parameter, which the replay spends as a timed busy-wait
// before the parameter's gradient counts as ready: the input's own times (a CSV's backward_us),
// a rate in microseconds per million parameters, or a total backward time spread over the
// parameters (in proportion to the input's times where it has them, else to their sizes).
#pragma once

#include <vector>

#include "collectives/patterns/model.hpp"

namespace cb {

struct ComputeModel {
  enum class Kind { None, Input, Rate, Total };
  Kind kind = Kind::None;
  double value = 0;  // Rate: us per 10^6 parameters; Total: us
};

// The model --backward-us-per-mparam / --backward-ms ask for (empty text: not given): the input's
// times when it has them and neither is given, else no compute. A usage Error on bad values or
// when both are given.
ComputeModel compute_model(const std::string& rate_text, const std::string& total_ms_text,
                           const Model& model);

// Microseconds of backward compute per parameter, in model order.
std::vector<double> backward_times(const Model& model, const ComputeModel& compute);

// "none", "from the input", "1.5 us per million parameters", "backward 120 ms in all".
std::string describe(const ComputeModel& compute);

}  // namespace cb
