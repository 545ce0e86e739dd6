// The acceptance check's rules, one file per kind of requirement (check_results.cpp,
// check_topology.cpp, check_links.cpp), and what they share. Internal to report/.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "report/check/check_report.hpp"
#include "report/check/check_spec.hpp"
#include "report/check/topology_facts.hpp"
#include "report/format/result_reader.hpp"
#include "report/links/links_verdict.hpp"

namespace cb {

inline constexpr std::size_t kMaxDetails = 10;

// Adds a detail line unless it is already there or kMaxDetails are.
void add_detail(RequirementResult& out, std::string line);
std::string joined(const std::vector<std::string>& parts, const char* sep);

// Collects one line per key checked; a requirement passes when every key does.
class TopologyChecks {
 public:
  explicit TopologyChecks(RequirementResult& out) : out_(out) {}
  void add(bool ok, const std::string& measured, const std::string& expected) {
    measured_.push_back(measured);
    expected_.push_back(expected);
    ok_ = ok_ && ok;
  }
  void detail(std::string line) { add_detail(out_, std::move(line)); }
  void finish() {
    for (const auto& m : measured_) out_.measured += (out_.measured.empty() ? "" : "; ") + m;
    for (const auto& e : expected_) out_.expected += (out_.expected.empty() ? "" : "; ") + e;
    out_.passed = ok_;
  }

 private:
  RequirementResult& out_;
  std::vector<std::string> measured_, expected_;
  bool ok_ = true;
};

// The result of requirement `q` of `kind` ("results", "topology", "links") before any check.
template <class Requirement>
RequirementResult result_for(const Requirement& q, const char* kind) {
  RequirementResult out;
  out.name = q.name;
  out.kind = kind;
  out.line = q.line;
  out.severity = q.severity;
  return out;
}

RequirementResult evaluate_results(const ResultRequirement& q,
                                   const std::vector<ResultFile>& files);
// On one host's facts, or on every host of a cluster's, naming the hosts that fail.
RequirementResult evaluate_topology(const TopologyRequirement& q, const TopologyFacts& topology);
RequirementResult evaluate_links(const LinksRequirement& q, const std::vector<LinkSample>& pairs);

// The pairs of a commbench/links/v2 document; a usage Error naming `source` otherwise.
std::vector<LinkSample> link_samples(const nlohmann::json& doc, const std::string& source);

}  // namespace cb
