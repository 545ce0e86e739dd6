// `compare` as work: BASE... NEW result files read, matched and judged over launches, the report
// in the chosen format on stdout (and --output); exit 5 on a credible regression, 6 when
// inconclusive, 3 when the new side has wrong elements.
#pragma once

#include <string>
#include <vector>

#include "app/flags.hpp"

namespace cb {

struct CompareRequest {
  std::vector<std::string> files;  // BASE... NEW
  std::string threshold = "25";
  std::string level_threshold = "5";
  std::string noise_factor = "1";
  std::string latency_bytes = "64K";
  bool fail_on_missing = false;
  std::string alpha = "0.01";
  std::string format = "table";
  std::string output;
};

const Flags<CompareRequest>& compare_flags();

// Checks every value, reads, compares and reports. Returns the exit code (0, or 3 after a
// records-only format put the verdict on stderr); throws the verdict's Error otherwise.
int compare(const CompareRequest& rq);

}  // namespace cb
