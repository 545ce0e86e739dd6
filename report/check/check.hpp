// Evaluating an acceptance spec: each requirement against result records or a topology document,
// with the measured value, the expected one and, on failure, what did not meet it.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "common/schema.hpp"
#include "report/check/check_spec.hpp"
#include "report/check/topology_facts.hpp"
#include "report/format/result_reader.hpp"

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

// `topology` may be null when the spec has no [[topology]] requirement, `links` (a
// commbench/links/v2 document) when it has no [[links]] requirement. Topology requirements on a
// cluster-topology document hold on every host; failures name the host.
CheckReport evaluate_spec(const Spec& spec, const std::vector<ResultFile>& results,
                          const nlohmann::json& topology, const std::string& topology_source,
                          const nlohmann::json& links = nullptr,
                          const std::string& links_source = {});

// `check --expect auto`: one item per collective (per backend and algorithm, and per host set
// when the files come from different hosts) on its large-message efficiency, against
// `min_efficiency` or the default for its kind of roof. Unknown roofs give warnings.
std::vector<RequirementResult> evaluate_expect_auto(const std::vector<ResultFile>& files,
                                                    std::optional<double> min_efficiency);

}  // namespace cb
