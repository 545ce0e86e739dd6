// The Open MPI coll/tuned dynamic rules file that applies tuning advice for the mpi backend.
#pragma once

#include <string>
#include <vector>

#include "common/tune_range.hpp"

namespace cb::mpi {

std::string ompi_rules_file(const std::vector<TuneRange>& ranges);

}  // namespace cb::mpi
