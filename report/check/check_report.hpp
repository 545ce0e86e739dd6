// What check found: one result per requirement, with the measured value, the expected one and,
// on failure, what did not meet it.
#pragma once

#include <string>
#include <vector>

#include "report/check/check_spec.hpp"

namespace cb {

struct RequirementResult {
  std::string name;
  std::string kind;  // "results" or "topology"
  int line = 0;      // in the spec
  Severity severity = Severity::Error;
  bool passed = false;
  std::string measured;              // the figure(s) found, worst first
  std::string expected;              // the limit(s), as written in the spec
  std::vector<std::string> details;  // one line per shortfall (empty when passed)
};

struct CheckReport {
  std::string spec_path;
  std::string spec_name;
  std::vector<std::string> result_files;
  std::string topology_source;  // empty when no [[topology]] requirement
  std::string links_source;     // empty when no [[links]] requirement
  std::vector<RequirementResult> items;

  int passed() const;
  int failed() const;           // error severity, not passed
  int warnings() const;         // warning severity, not passed
  std::string summary() const;  // "3 passed, 1 failed, 0 warnings"
};

}  // namespace cb
