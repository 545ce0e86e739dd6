// tune's advice as text: a commented table of what to use per size range.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "common/tune_range.hpp"

namespace cb {

// The advice as a commented table: per backend, collective, dtype, op and placement, what to use
// in each size range.
void print_advice(const std::vector<TuneRange>& ranges, const std::string& what, std::ostream& out);

}  // namespace cb
