// The NCCL tuner-plugin configuration (NCCL's example tuner format) that applies tuning advice
// for the nccl backend.
#pragma once

#include <string>
#include <vector>

#include "common/tune_range.hpp"

namespace cb::nccl {

std::string nccl_tuner_file(const std::vector<TuneRange>& ranges);

}  // namespace cb::nccl
