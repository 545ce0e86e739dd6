// The files `commbench tune` writes to apply its advice: an Open MPI coll/tuned dynamic rules
// file and an NCCL tuner-plugin configuration (the CSV of NCCL's example tuner).
#pragma once

#include <string>
#include <vector>

#include "report/tune.hpp"

namespace cb {

// Rules for the mpi ranges: the first (dtype, op, placement, root) group of each collective.
std::string ompi_rules_file(const std::vector<TuneRange>& ranges);

// One line per nccl range where a forced algorithm/protocol wins; default ranges are left out.
std::string nccl_tuner_file(const std::vector<TuneRange>& ranges);

}  // namespace cb
