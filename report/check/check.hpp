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
#include "report/check/host_reference.hpp"
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

// How `check --expect auto` judges (docs/check.md).
struct ExpectOptions {
  // Every collective's large-message efficiency must reach this (--min-efficiency); empty: the
  // rule of its path (GPU and network roofs: the default for the kind of roof; host memory: the
  // healthy references).
  std::optional<double> min_efficiency;
  // Healthy runs given with --reference, beside the built-in table.
  std::vector<HostReference> references;
  bool builtin_references = true;
  // Across hosts, each host must reach this fraction of its peers' median (--fleet-fraction).
  double fleet_fraction = 0.75;
};
inline constexpr double kDefaultFleetFraction = 0.75;

// `check --expect auto`: one item per collective (per backend and algorithm, and per host set
// when the files come from different hosts): GPU and network paths on their large-message
// efficiency against the default for their kind of roof, host memory against its healthy
// references, or `min_efficiency` for all; and, across hosts, each host against the fleet's
// median. What cannot be judged gives warnings that say why, never a pass.
std::vector<RequirementResult> evaluate_expect_auto(const std::vector<ResultFile>& files,
                                                    const ExpectOptions& options);
// Across hosts: several hosts' files (each collective, each host against the median of the
// others on the same cases) or a file from several hosts (each host's memory copy figures, and
// the run's straggler judgement). Empty for one host.
std::vector<RequirementResult> evaluate_fleet(const std::vector<ResultFile>& files,
                                              double fraction);

}  // namespace cb
