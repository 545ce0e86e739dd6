// `check --expect auto`: every collective judged on its large-message efficiency against the
// roof the hardware facts give (report/roof/roof.hpp), without a spec. A collective whose roof is
// unknown is "not judged", a warning, never a pass.
#include <fmt/format.h>

#include <map>
#include <tuple>

#include "common/units.hpp"
#include "report/check/check_rules.hpp"
#include "report/repetitions.hpp"
#include "report/roof/roof.hpp"

namespace cb {

namespace {

// Files from different hosts are judged apart (one run per node of a cluster).
std::string hosts_of(const ResultFile& f) {
  return f.meta ? joined(f.meta->hosts, ",") : std::string();
}

}  // namespace

std::vector<RequirementResult> evaluate_expect_auto(const std::vector<ResultFile>& files,
                                                    std::optional<double> min_efficiency) {
  using Key = std::tuple<std::string, std::string, std::string, std::string>;
  std::vector<Key> order;
  std::map<Key, std::vector<ResultRecord>> groups;
  for (const auto& f : files) {
    const nlohmann::json topology = f.meta_json.is_object()
                                        ? f.meta_json.value("topology", nlohmann::json())
                                        : nlohmann::json();
    for (const auto& r : f.records) {
      if (r.collective == "barrier") continue;  // moves no data
      ResultRecord judged = r;
      apply_roof(judged, topology);
      Key k{hosts_of(f), r.backend, series_algorithm(r), r.collective};
      if (groups[k].empty()) order.push_back(k);
      groups[k].push_back(std::move(judged));
    }
  }
  bool several_hosts = false;
  for (const auto& k : order) several_hosts |= std::get<0>(k) != std::get<0>(order.front());
  std::vector<RequirementResult> out;
  for (const auto& k : order) {
    const auto& [hosts, backend, algo, collective] = k;
    std::vector<const ResultRecord*> records;
    for (const auto& r : groups[k]) records.push_back(&r);
    const LargeMessageEfficiency e = large_message_efficiency(records);
    RequirementResult item;
    item.name = fmt::format("{} ({}/{}{}) efficiency", collective, backend, algo,
                            several_hosts && !hosts.empty() ? " on " + hosts : "");
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
      out.push_back(std::move(item));
      continue;
    }
    item.measured = efficiency_line(collective, e);
    item.expected = fmt::format(
        "efficiency >= {:g} ({})", *limit,
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
    out.push_back(std::move(item));
  }
  return out;
}

}  // namespace cb
