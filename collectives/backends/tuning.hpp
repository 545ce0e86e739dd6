// Files a backend can write from tuning advice (`commbench tune --emit-...`), so that the
// library uses the recommended algorithms without commbench.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "collectives/catalogue/catalogue.hpp"
#include "common/tune_range.hpp"

namespace cb {

struct TuningFile {
  std::string option;  // "--emit-ompi-rules"
  std::string help;
  std::function<std::string(const std::vector<TuneRange>&)> write;  // the file's text
};

// Ranges of the first (dtype, op, placement, root) group seen for each collective of `backend`.
std::map<Collective, std::vector<const TuneRange*>> first_groups(
    const std::vector<TuneRange>& ranges, const std::string& backend);

}  // namespace cb
