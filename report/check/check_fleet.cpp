// `check --expect auto` across hosts: each host against the median of its peers on the same case,
// as operators accept a fleet (a node at half its peers' figure fails whatever its roof says).
// Several hosts' result files (one run per node): every collective, each host's busbw at its
// largest sizes; one result file from several hosts: each host's memory copy figures and the
// run's straggler judgement.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "common/median.hpp"
#include "common/units.hpp"
#include "report/check/check.hpp"
#include "report/check/check_rules.hpp"
#include "report/repetitions.hpp"

namespace cb {

namespace {

std::string figure(double v) {
  return v >= 0.1 ? fmt::format("{:.2f}", v) : fmt::format("{:.2g}", v);
}

// Each host's value against the median of the others', per case, as the geometric mean over the
// cases; `values[host][case]`.
std::map<std::string, double> against_peers(
    const std::map<std::string, std::map<std::string, double>>& values,
    const std::vector<std::string>& cases) {
  std::map<std::string, double> out;
  for (const auto& [host, mine] : values) {
    double log_sum = 0;
    for (const auto& c : cases) {
      std::vector<double> peers;
      for (const auto& [other, theirs] : values) {
        if (other != host) peers.push_back(theirs.at(c));
      }
      log_sum += std::log(mine.at(c) / median_of(peers));
    }
    out[host] = std::exp(log_sum / static_cast<double>(cases.size()));
  }
  return out;
}

// One item: passes when every host reaches `fraction` of its peers; measured names the lowest.
RequirementResult fleet_item(const std::string& name, const std::string& what,
                             const std::map<std::string, double>& ratios,
                             const std::map<std::string, std::string>& shown, double fraction) {
  RequirementResult item;
  item.name = name;
  item.kind = "results";
  auto lowest = std::min_element(ratios.begin(), ratios.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
  double others_low = 1e300, others_high = 0;
  for (const auto& [host, r] : ratios) {
    if (host == lowest->first) continue;
    others_low = std::min(others_low, r);
    others_high = std::max(others_high, r);
  }
  item.measured =
      fmt::format("{}: {}, {} of its {} peer{}' median; the others {}-{}", lowest->first,
                  shown.at(lowest->first), figure(lowest->second), ratios.size() - 1,
                  ratios.size() == 2 ? "" : "s", figure(others_low), figure(others_high));
  item.expected =
      fmt::format(">= {:g} of its peers' median {} (each host against the others)", fraction, what);
  item.passed = true;
  for (const auto& [host, r] : ratios) {
    if (r >= fraction) continue;
    item.passed = false;
    add_detail(item,
               fmt::format("{}: {}, {} of its peers' median", host, shown.at(host), figure(r)));
  }
  return item;
}

// Several hosts' files: per collective (backend, algorithm), each host's busbw at the largest
// sizes every host measured.
std::vector<RequirementResult> across_files(const std::vector<const ResultFile*>& files,
                                            double fraction) {
  // [series][host][size] -> busbw figures
  std::map<std::string, std::map<std::string, std::map<std::uint64_t, std::vector<double>>>> all;
  std::vector<std::string> order;
  for (const ResultFile* f : files) {
    const std::string& host = f->meta->hosts.front();
    for (const auto& r : f->records) {
      if (r.collective == "barrier" || !r.busbw_GBps || *r.busbw_GBps <= 0) continue;
      const std::string series = fmt::format(
          "{} ({}/{}) {} {} {}{}{}", r.collective, r.backend, series_algorithm(r), r.dtype, r.op,
          r.placement, r.root >= 0 ? fmt::format(" root {}", r.root) : std::string(),
          r.split.empty() ? std::string() : " " + r.split);
      if (!all.count(series)) order.push_back(series);
      all[series][host][r.bytes].push_back(*r.busbw_GBps);
    }
  }
  std::vector<RequirementResult> out;
  for (const auto& series : order) {
    const auto& hosts = all[series];
    if (hosts.size() < 2) continue;
    // The largest sizes every host has, up to three.
    std::set<std::uint64_t, std::greater<>> common;
    for (const auto& [size, v] : hosts.begin()->second) common.insert(size);
    for (const auto& [host, sizes] : hosts) {
      std::erase_if(common, [&](std::uint64_t s) { return !sizes.count(s); });
    }
    if (common.empty()) continue;
    std::vector<std::string> cases;
    std::map<std::string, std::map<std::string, double>> values;
    std::map<std::string, std::string> shown;
    std::uint64_t lo = 0, hi = 0;
    int n = 0;
    for (std::uint64_t size : common) {
      if (n++ == 3) break;
      cases.push_back(std::to_string(size));
      lo = size;
      hi = std::max(hi, size);
      for (const auto& [host, sizes] : hosts) {
        values[host][cases.back()] = median_of(sizes.at(size));
      }
    }
    const std::string where =
        lo == hi ? format_size(lo) : fmt::format("{}-{}", format_size(lo), format_size(hi));
    for (const auto& [host, v] : values) {
      double sum = 0;
      for (const auto& c : cases) sum += v.at(c);
      shown[host] = fmt::format("busbw {} GB/s at {}", figure(sum / cases.size()), where);
    }
    const std::string name =
        fmt::format("{} across {} hosts", series.substr(0, series.find(')') + 1), hosts.size());
    out.push_back(
        fleet_item(name, "busbw at the same sizes", against_peers(values, cases), shown, fraction));
  }
  return out;
}

// A file from several hosts: each host's memory copy figures against its peers', and the run's
// straggler judgement.
std::vector<RequirementResult> within_file(const ResultFile& f, double fraction) {
  std::vector<RequirementResult> out;
  const nlohmann::json t = f.meta_json.value("topology", nlohmann::json());
  if (t.is_object() && t.contains("roof_facts") && t["roof_facts"].is_object()) {
    std::map<std::string, std::map<std::string, double>> values;
    std::map<std::string, std::string> shown;
    const std::vector<std::string> cases = {"copy_1thread_GBps", "copy_all_GBps"};
    for (const auto& [host, facts] : t["roof_facts"].items()) {
      const nlohmann::json& mem =
          facts.is_object() ? facts.value("host_memory", nlohmann::json()) : nlohmann::json();
      if (!mem.is_object() || !mem.value(cases[0], 0.0) || !mem.value(cases[1], 0.0)) continue;
      for (const auto& c : cases) values[host][c] = mem[c].get<double>();
      shown[host] = fmt::format("memory copy {} GB/s on one thread, {} on all",
                                figure(values[host][cases[0]]), figure(values[host][cases[1]]));
    }
    if (values.size() >= 2) {
      out.push_back(fleet_item(
          fmt::format("host memory across {} hosts ({})", values.size(), file_label(f.path)),
          "memory copy bandwidth", against_peers(values, cases), shown, fraction));
    }
  }
  if (f.meta && f.meta->straggler) {
    const RankStraggler& s = *f.meta->straggler;
    RequirementResult item;
    item.name = fmt::format("no straggling rank ({})", file_label(f.path));
    item.kind = "results";
    item.measured =
        fmt::format("rank {} on {} was the slowest in {} of {} cases, at {:.2f}x the median rank",
                    s.rank, s.host, s.slowest_cases, s.cases, s.ratio);
    item.expected = "no rank the slowest in most cases by 1.1x or more (the run's straggler rule)";
    item.passed = !s.found;
    out.push_back(std::move(item));
  }
  return out;
}

}  // namespace

std::vector<RequirementResult> evaluate_fleet(const std::vector<ResultFile>& files,
                                              double fraction) {
  std::vector<const ResultFile*> single_host;
  std::set<std::string> hosts;
  std::vector<RequirementResult> out;
  for (const auto& f : files) {
    if (!f.meta || f.meta->hosts.empty()) continue;
    if (f.meta->hosts.size() == 1) {
      single_host.push_back(&f);
      hosts.insert(f.meta->hosts.front());
    } else {
      for (auto& item : within_file(f, fraction)) out.push_back(std::move(item));
    }
  }
  if (hosts.size() >= 2) {
    for (auto& item : across_files(single_host, fraction)) out.push_back(std::move(item));
  }
  return out;
}

}  // namespace cb
