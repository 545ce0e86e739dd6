// Evaluating an acceptance spec: each requirement against result records or a topology document,
// with the measured value, the expected one and, on failure, what did not meet it.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "common/schema.hpp"
#include "report/check/check_report.hpp"
#include "report/check/check_spec.hpp"
#include "report/check/topology_facts.hpp"
#include "report/format/result_reader.hpp"

namespace cb {

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
