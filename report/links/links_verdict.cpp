#include "report/links/links_verdict.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace cb {

namespace {

using Metric = std::optional<double> HostLink::*;

struct MetricRule {
  const char* name;
  Metric field;
  bool higher_is_better;
};

constexpr MetricRule kRules[] = {{"bandwidth", &HostLink::bandwidth_GBps, true},
                                 {"latency", &HostLink::latency_us, false}};

std::optional<double> median_where(const std::vector<HostLink>& links, Metric m,
                                   const std::function<bool(const HostLink&)>& keep) {
  std::vector<double> v;
  for (const auto& l : links)
    if (keep(l) && (l.*m)) v.push_back(*(l.*m));
  if (v.empty()) return std::nullopt;
  return median_of(v);
}

double score(const MetricRule& rule, double value, double reference) {
  if (rule.higher_is_better) return reference > 0 ? value / reference : 1.0;
  return value > 0 ? reference / value : 1.0;
}

bool touches(const HostLink& l, const std::string& h) {
  return l.src == h || l.dst == h;
}

}  // namespace

LinksVerdict links_verdict(const std::vector<LinkSample>& pairs, double min_fraction) {
  LinksVerdict out;
  std::vector<std::string> hosts;
  std::map<std::pair<std::string, std::string>, std::pair<std::vector<double>, std::vector<double>>>
      by_host_pair;
  std::vector<std::pair<std::string, std::string>> order;
  for (const auto& p : pairs) {
    for (const auto* h : {&p.src_host, &p.dst_host})
      if (std::find(hosts.begin(), hosts.end(), *h) == hosts.end()) hosts.push_back(*h);
    if (p.src_host == p.dst_host) continue;
    auto key = std::make_pair(p.src_host, p.dst_host);
    if (!by_host_pair.count(key)) order.push_back(key);
    auto& [bw, lat] = by_host_pair[key];
    if (p.bandwidth_GBps) bw.push_back(*p.bandwidth_GBps);
    if (p.latency_us) lat.push_back(*p.latency_us);
  }
  for (const auto& key : order) {
    const auto& [bw, lat] = by_host_pair[key];
    HostLink l{key.first, key.second, std::nullopt, std::nullopt, std::nullopt};
    if (!bw.empty()) l.bandwidth_GBps = median_of(bw);
    if (!lat.empty()) l.latency_us = median_of(lat);
    out.links.push_back(l);
  }
  for (const auto& h : hosts) {
    HostLinkSummary s{h, std::nullopt, std::nullopt, std::nullopt, std::nullopt};
    auto mine = [&](const HostLink& l) { return touches(l, h); };
    s.median_GBps = median_where(out.links, &HostLink::bandwidth_GBps, mine);
    s.median_latency_us = median_where(out.links, &HostLink::latency_us, mine);
    for (const auto& l : out.links) {
      if (mine(l) && l.bandwidth_GBps && (!s.min_GBps || *l.bandwidth_GBps < *s.min_GBps))
        s.min_GBps = l.bandwidth_GBps;
    }
    out.hosts.push_back(s);
  }

  std::vector<Straggler> single;
  for (const auto& rule : kRules) {
    std::set<std::string> named;
    for (const auto& h : hosts) {
      auto others =
          median_where(out.links, rule.field, [&](const HostLink& l) { return !touches(l, h); });
      auto reference =
          others ? others : median_where(out.links, rule.field, [](auto&) { return true; });
      if (!reference) continue;
      int total = 0, slow = 0;
      for (const auto& l : out.links) {
        if (!touches(l, h) || !(l.*rule.field)) continue;
        ++total;
        if (score(rule, *(l.*rule.field), *reference) < min_fraction) ++slow;
      }
      if (total == 0 || 2 * slow <= total) continue;
      double value =
          *median_where(out.links, rule.field, [&](const HostLink& l) { return touches(l, h); });
      named.insert(h);
      out.stragglers.push_back({h, std::nullopt, rule.name, value, *reference,
                                score(rule, value, *reference), "host", std::nullopt, std::nullopt,
                                0});
    }
    auto healthy = [&](const HostLink& l) { return !named.count(l.src) && !named.count(l.dst); };
    auto reference = median_where(out.links, rule.field, healthy);
    if (!reference) continue;
    for (const auto& l : out.links) {
      if (!healthy(l) || !(l.*rule.field)) continue;
      double f = score(rule, *(l.*rule.field), *reference);
      if (f < min_fraction)
        single.push_back({l.src, l.dst, rule.name, *(l.*rule.field), *reference, f, "link",
                          std::nullopt, std::nullopt, 0});
    }
  }
  out.stragglers.insert(out.stragglers.end(), single.begin(), single.end());
  return out;
}

}  // namespace cb
