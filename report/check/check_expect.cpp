// `check --expect auto`: every collective judged without a spec. GPU and network paths on their
// large-message efficiency against the roof the hardware facts give (report/roof/roof.hpp) and
// the default threshold for its kind; host memory (MPI, Gloo on one node) against healthy
// launches of the same library on the same kind of machine (host_reference.hpp); across hosts,
// each host against its peers (check_fleet.cpp). What cannot be judged is "not judged", a
// warning that says why, never a pass.
#include <fmt/format.h>

#include <map>
#include <tuple>

#include "common/units.hpp"
#include "report/check/check.hpp"
#include "report/check/check_rules.hpp"
#include "report/repetitions.hpp"
#include "report/roof/roof.hpp"

namespace cb {

namespace {

// Files from different hosts are judged apart (one run per node of a cluster).
std::string hosts_of(const ResultFile& f) {
  return f.meta ? joined(f.meta->hosts, ",") : std::string();
}

// Host memory: MPI or Gloo with every rank on one node.
bool host_memory_path(const ResultRecord& r) {
  return (r.backend == "mpi" || r.backend == "gloo") && r.nnodes <= 1;
}

// Judged against the healthy references of its library and machine.
RequirementResult against_references(const std::string& label,
                                     const std::vector<const ResultRecord*>& records,
                                     const ResultFile& file, const LargeMessageEfficiency& e,
                                     const std::vector<HostReference>& references) {
  RequirementResult item;
  item.name = label + " against its healthy reference";
  item.kind = "results";
  const HostJudgement j =
      judge_against_references(records, machine_of(file), conditions_of(file), references);
  item.measured = j.measured;
  if (!j.judged) {
    item.severity = Severity::Warning;
    item.expected = "a healthy reference of this library on this machine, in the same mode";
  } else {
    item.expected = j.expected;
    item.passed = j.passed;
  }
  item.details.push_back(efficiency_line(records.front()->collective, e));
  return item;
}

// Judged on its large-message efficiency against the threshold of its kind of roof, or the one
// given.
RequirementResult against_roof(const std::string& label,
                               const std::vector<const ResultRecord*>& records,
                               const LargeMessageEfficiency& e,
                               std::optional<double> min_efficiency) {
  const std::string& collective = records.front()->collective;
  RequirementResult item;
  item.name = label + " efficiency";
  item.kind = "results";
  const std::optional<double> limit =
      min_efficiency ? min_efficiency : default_min_efficiency(e.kind);
  if (!e.efficiency || !limit) {
    item.severity = Severity::Warning;
    item.measured = "not judged: " + (e.efficiency ? e.basis : e.why_not);
    item.expected = e.allocator_bound
                        ? "page faults per call below 1/8 of its bytes, for the roof to apply"
                        : "a roof for this hardware";
    item.details.push_back(efficiency_line(collective, e));
    return item;
  }
  item.measured = efficiency_line(collective, e);
  item.expected =
      fmt::format("efficiency >= {:g} ({})", *limit,
                  min_efficiency ? std::string("--min-efficiency")
                                 : fmt::format("default for the {} roof", roof_kind_name(e.kind)));
  item.passed = *e.efficiency >= *limit;
  if (!item.passed) {
    for (const auto* r : records) {
      if (r->efficiency && r->bytes >= e.min_bytes && *r->efficiency < *limit) {
        add_detail(item,
                   fmt::format("{} {} {}: busbw {:.3g} GB/s = {:.2g} of {:.3g} GB/s", collective,
                               format_size(r->bytes), r->dtype, r->busbw_GBps.value_or(0),
                               *r->efficiency, r->roof_GBps.value_or(0)));
      }
    }
  }
  return item;
}

}  // namespace

std::vector<RequirementResult> evaluate_expect_auto(const std::vector<ResultFile>& files,
                                                    const ExpectOptions& options) {
  using Key = std::tuple<std::string, std::string, std::string, std::string>;
  std::vector<Key> order;
  std::map<Key, std::vector<ResultRecord>> groups;
  std::map<Key, const ResultFile*> file_of;  // the first file of the group
  for (const auto& f : files) {
    const nlohmann::json topology = f.meta_json.is_object()
                                        ? f.meta_json.value("topology", nlohmann::json())
                                        : nlohmann::json();
    for (const auto& r : f.records) {
      if (r.collective == "barrier") continue;  // moves no data
      ResultRecord judged = r;
      apply_roof(judged, topology);
      Key k{hosts_of(f), r.backend, series_algorithm(r), r.collective};
      if (groups[k].empty()) {
        order.push_back(k);
        file_of[k] = &f;
      }
      groups[k].push_back(std::move(judged));
    }
  }
  std::vector<HostReference> references = options.references;
  if (options.builtin_references) {
    const auto& builtin = builtin_host_references();
    references.insert(references.end(), builtin.begin(), builtin.end());
  }
  bool several_hosts = false;
  for (const auto& k : order) several_hosts |= std::get<0>(k) != std::get<0>(order.front());
  std::vector<RequirementResult> out;
  for (const auto& k : order) {
    const auto& [hosts, backend, algo, collective] = k;
    std::vector<const ResultRecord*> records;
    for (const auto& r : groups[k]) records.push_back(&r);
    const LargeMessageEfficiency e = large_message_efficiency(records);
    const std::string label = fmt::format("{} ({}/{}{})", collective, backend, algo,
                                          several_hosts && !hosts.empty() ? " on " + hosts : "");
    // A library that maps its buffers afresh on every call is bound by its allocator: said with
    // the figures, whatever the path.
    if (!options.min_efficiency && host_memory_path(*records.front()) && !e.allocator_bound) {
      out.push_back(against_references(label, records, *file_of[k], e, references));
    } else {
      out.push_back(against_roof(label, records, e, options.min_efficiency));
    }
  }
  for (auto& item : evaluate_fleet(files, options.fleet_fraction)) out.push_back(std::move(item));
  return out;
}

}  // namespace cb
