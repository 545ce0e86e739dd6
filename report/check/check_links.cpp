// Links requirements: the probe links document's hosts and links against the median, and
// against absolute bandwidth and latency limits.
#include <fmt/format.h>

#include <algorithm>

#include "common/error.hpp"
#include "common/schema.hpp"
#include "report/check/check_rules.hpp"
#include "report/links/links_verdict.hpp"

namespace cb {

using nlohmann::json;

std::vector<LinkSample> link_samples(const json& doc, const std::string& source) {
  if (!doc.is_object() || doc.value("schema", std::string()) != kLinksSchema) {
    usage_error("{}: expected a {} document (probe links --format json)", source, kLinksSchema);
  }
  auto pairs = doc.find("pairs");
  if (pairs == doc.end() || !pairs->is_array())
    usage_error("{}: 'pairs' must be an array in a {} document", source, kLinksSchema);
  std::vector<LinkSample> out;
  for (const auto& p : *pairs) {
    try {
      LinkSample s;
      s.src_rank = p.at("src_rank").get<int>();
      s.dst_rank = p.at("dst_rank").get<int>();
      s.src_host = p.at("src_host").get<std::string>();
      s.dst_host = p.at("dst_host").get<std::string>();
      if (p.contains("bandwidth_GBps") && p["bandwidth_GBps"].is_number())
        s.bandwidth_GBps = p["bandwidth_GBps"].get<double>();
      if (p.contains("latency_us") && p["latency_us"].is_number())
        s.latency_us = p["latency_us"].get<double>();
      if (p.contains("nic") && p["nic"].is_string()) s.nic = p["nic"].get<std::string>();
      if (p.contains("rail") && p["rail"].is_number_integer()) s.rail = p["rail"].get<int>();
      for (auto [key, into] : {std::pair{"remeasured_GBps", &s.remeasured_GBps},
                               std::pair{"remeasured_latency_us", &s.remeasured_latency_us}}) {
        if (!p.contains(key) || !p[key].is_array()) continue;
        for (const auto& x : p[key])
          if (x.is_number()) into->push_back(x.get<double>());
      }
      out.push_back(s);
    } catch (const json::exception&) {
      usage_error("{}: a pair lacks src_rank, dst_rank, src_host or dst_host: {}", source,
                  p.dump());
    }
  }
  return out;
}

RequirementResult evaluate_links(const LinksRequirement& q, const std::vector<LinkSample>& all) {
  RequirementResult out = result_for(q, "links");
  TopologyChecks c(out);
  std::vector<LinkSample> pairs;
  for (const auto& p : all)
    if (!q.nic || p.nic == q.nic) pairs.push_back(p);
  const LinksVerdict verdict = rails_verdict(pairs, q.min_fraction_of_median.value_or(0.8));
  if (verdict.links.empty()) {
    c.add(false,
          q.nic ? "no links between hosts measured on NIC " + *q.nic
                : std::string("no links between hosts measured"),
          "links measured");
  }
  if (q.min_fraction_of_median) {
    std::vector<std::string> named;
    for (const auto& s : verdict.stragglers) {
      std::string who = straggler_name(s);
      if (std::find(named.begin(), named.end(), who) == named.end()) named.push_back(who);
      c.detail(fmt::format("{}: {} {:.3g} is {:.2f} of the median {:.3g}", who, s.metric, s.value,
                           s.fraction, s.median));
    }
    c.add(named.empty(),
          named.empty()
              ? std::string("no straggler")
              : fmt::format("straggler{}: {}", named.size() == 1 ? "" : "s", joined(named, ", ")),
          fmt::format("every host and link >= {:g} of the median", *q.min_fraction_of_median));
  }
  auto limit = [&](bool bandwidth, double bound) {
    std::vector<std::string> bad;
    std::optional<double> worst;
    for (const auto& l : verdict.links) {
      auto v = bandwidth ? l.bandwidth_GBps : l.latency_us;
      if (!v) continue;
      if (!worst || (bandwidth ? *v < *worst : *v > *worst)) worst = v;
      if (bandwidth ? *v < bound : *v > bound) {
        std::string name = l.src + " -> " + l.dst + (l.nic ? " NIC " + *l.nic : std::string());
        bad.push_back(name);
        c.detail(fmt::format("{}: {:.3g} {}", name, *v, bandwidth ? "GB/s" : "us"));
      }
    }
    std::string what = bandwidth ? "GB/s" : "us";
    c.add(bad.empty() && worst,
          !worst        ? "no " + std::string(bandwidth ? "bandwidth" : "latency") + " measured"
          : bad.empty() ? fmt::format("worst link {:.3g} {}", *worst, what)
                        : fmt::format("{} link{} beyond: {}", bad.size(),
                                      bad.size() == 1 ? "" : "s", joined(bad, ", ")),
          fmt::format("every link {} {:g} {}", bandwidth ? ">=" : "<=", bound, what));
  };
  if (q.min_GBps) limit(true, *q.min_GBps);
  if (q.max_latency_us) limit(false, *q.max_latency_us);
  c.finish();
  return out;
}

}  // namespace cb
