#include "report/check/check.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "report/check/check_rules.hpp"

namespace cb {

using nlohmann::json;

void add_detail(RequirementResult& out, std::string line) {
  if (out.details.size() >= kMaxDetails) return;
  if (std::find(out.details.begin(), out.details.end(), line) == out.details.end()) {
    out.details.push_back(std::move(line));
  }
}

std::string joined(const std::vector<std::string>& parts, const char* sep) {
  std::string s;
  for (const auto& p : parts) {
    if (!s.empty()) s += sep;
    s += p;
  }
  return s;
}

int CheckReport::passed() const {
  return static_cast<int>(
      std::count_if(items.begin(), items.end(), [](const auto& r) { return r.passed; }));
}

int CheckReport::failed() const {
  return static_cast<int>(std::count_if(items.begin(), items.end(), [](const auto& r) {
    return !r.passed && r.severity == Severity::Error;
  }));
}

int CheckReport::warnings() const {
  return static_cast<int>(std::count_if(items.begin(), items.end(), [](const auto& r) {
    return !r.passed && r.severity == Severity::Warning;
  }));
}

std::string CheckReport::summary() const {
  return fmt::format("{} passed, {} failed, {} warning{}", passed(), failed(), warnings(),
                     warnings() == 1 ? "" : "s");
}

CheckReport evaluate_spec(const Spec& spec, const std::vector<ResultFile>& results,
                          const json& topology, const std::string& topology_source,
                          const json& links, const std::string& links_source) {
  CheckReport report;
  report.spec_path = spec.path;
  report.spec_name = spec.name;
  for (const auto& f : results) report.result_files.push_back(f.path);
  for (const auto& q : spec.results) report.items.push_back(evaluate_results(q, results));
  if (!spec.topology.empty()) {
    report.topology_source = topology_source;
    const TopologyFacts facts = topology_facts(topology);
    for (const auto& q : spec.topology) report.items.push_back(evaluate_topology(q, facts));
  }
  if (!spec.links.empty()) {
    const std::vector<LinkSample> pairs = link_samples(links, links_source);
    report.links_source = links_source;
    for (const auto& q : spec.links) report.items.push_back(evaluate_links(q, pairs));
  }
  return report;
}

}  // namespace cb
