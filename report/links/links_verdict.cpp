#include "report/links/links_verdict.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <set>

namespace cb {

namespace {

using Metric = std::optional<double> HostLink::*;

struct MetricRule {
  const char* name;
  Metric field;
  bool higher_is_better;
  Metric remeasured;  // the same figure measured again: the best of those measurements
  Metric typical;     // and the mean of those measurements
};

constexpr MetricRule kRules[] = {
    {"bandwidth", &HostLink::bandwidth_GBps, true, &HostLink::remeasured_GBps,
     &HostLink::remeasured_typical_GBps},
    {"latency", &HostLink::latency_us, false, &HostLink::remeasured_latency_us,
     &HostLink::remeasured_typical_latency_us}};

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

bool remeasured_any(const std::vector<LinkSample>& pairs) {
  return std::any_of(pairs.begin(), pairs.end(), [](const LinkSample& p) {
    return !p.remeasured_GBps.empty() || !p.remeasured_latency_us.empty();
  });
}

bool is_link(const Straggler& s, const HostLink& l) {
  return s.peer && l.src == s.host && l.dst == *s.peer;
}

// Measured again, is the suspect `s` slow beyond the noise between healthy links? Fills its
// confirmation figures; true when it is.
bool confirm(Straggler& s, const MetricRule& rule, const std::vector<HostLink>& links,
             const std::vector<Straggler>& suspects, double min_fraction) {
  auto suspect_link = [&](const HostLink& l) {
    for (const auto& x : suspects) {
      if (x.metric != s.metric) continue;
      if (x.peer ? is_link(x, l) : touches(l, x.host)) return true;
    }
    return false;
  };
  std::vector<double> healthy, healthy_typical;
  for (const auto& l : links) {
    if (!(l.*rule.remeasured) || suspect_link(l)) continue;
    healthy.push_back(*(l.*rule.remeasured));
    healthy_typical.push_back((l.*rule.typical).value_or(*(l.*rule.remeasured)));
  }
  std::vector<double> mine;
  for (const auto& l : links) {
    if (!(l.*rule.remeasured)) continue;
    if (s.peer ? is_link(s, l) : touches(l, s.host)) mine.push_back(*(l.*rule.remeasured));
  }
  if (!mine.empty()) s.remeasured = median_of(mine);
  if (healthy.empty() || mine.empty()) return false;
  const double reference = median_of(healthy);
  double floor = 1.0;
  for (double h : healthy_typical) floor = std::min(floor, score(rule, h, reference));
  s.remeasured_median = reference;
  s.remeasured_fraction = score(rule, *s.remeasured, reference);
  s.noise_floor = floor;
  // Beyond the noise: as far below the lowest healthy link as that link is below the median (the
  // floor squared: ratios spread multiplicatively), and below min_fraction.
  const double below = std::min(min_fraction, floor * floor);
  std::size_t slow = 0;
  for (double v : mine) slow += score(rule, v, reference) < below;
  return 2 * slow > mine.size();
}

// The tournament's suspects: per metric, hosts with more than half of their links slow against
// the links that do not touch them, then single links slow against the links of hosts not named;
// whole hosts first.
std::vector<Straggler> suspects_on(const std::vector<HostLink>& links,
                                   const std::vector<std::string>& hosts, double min_fraction) {
  std::vector<Straggler> found;
  std::vector<Straggler> single;
  for (const auto& rule : kRules) {
    std::set<std::string> named;
    for (const auto& h : hosts) {
      auto others =
          median_where(links, rule.field, [&](const HostLink& l) { return !touches(l, h); });
      auto reference =
          others ? others : median_where(links, rule.field, [](auto&) { return true; });
      if (!reference) continue;
      int total = 0, slow = 0;
      for (const auto& l : links) {
        if (!touches(l, h) || !(l.*rule.field)) continue;
        ++total;
        if (score(rule, *(l.*rule.field), *reference) < min_fraction) ++slow;
      }
      if (total == 0 || 2 * slow <= total) continue;
      double value =
          *median_where(links, rule.field, [&](const HostLink& l) { return touches(l, h); });
      named.insert(h);
      found.push_back({h,
                       std::nullopt,
                       rule.name,
                       value,
                       *reference,
                       score(rule, value, *reference),
                       "host",
                       std::nullopt,
                       std::nullopt,
                       0,
                       {},
                       {},
                       {},
                       {}});
    }
    auto healthy = [&](const HostLink& l) { return !named.count(l.src) && !named.count(l.dst); };
    auto reference = median_where(links, rule.field, healthy);
    if (!reference) continue;
    for (const auto& l : links) {
      if (!healthy(l) || !(l.*rule.field)) continue;
      double f = score(rule, *(l.*rule.field), *reference);
      if (f < min_fraction)
        single.push_back({l.src,
                          l.dst,
                          rule.name,
                          *(l.*rule.field),
                          *reference,
                          f,
                          "link",
                          std::nullopt,
                          std::nullopt,
                          0,
                          {},
                          {},
                          {},
                          {}});
    }
  }
  found.insert(found.end(), single.begin(), single.end());
  return found;
}

}  // namespace

LinksVerdict links_verdict(const std::vector<LinkSample>& pairs, double min_fraction) {
  LinksVerdict out;
  std::vector<std::string> hosts;
  struct Figures {
    std::vector<double> bw, lat, bw_best, lat_best, bw_typical, lat_typical;
  };
  std::map<std::pair<std::string, std::string>, Figures> by_host_pair;
  std::vector<std::pair<std::string, std::string>> order;
  for (const auto& p : pairs) {
    for (const auto* h : {&p.src_host, &p.dst_host})
      if (std::find(hosts.begin(), hosts.end(), *h) == hosts.end()) hosts.push_back(*h);
    if (p.src_host == p.dst_host) continue;
    auto key = std::make_pair(p.src_host, p.dst_host);
    if (!by_host_pair.count(key)) order.push_back(key);
    Figures& f = by_host_pair[key];
    if (p.bandwidth_GBps) f.bw.push_back(*p.bandwidth_GBps);
    if (p.latency_us) f.lat.push_back(*p.latency_us);
    const auto& bw = p.remeasured_GBps;
    const auto& lat = p.remeasured_latency_us;
    if (!bw.empty()) {
      f.bw_best.push_back(*std::max_element(bw.begin(), bw.end()));
      f.bw_typical.push_back(std::accumulate(bw.begin(), bw.end(), 0.0) / bw.size());
    }
    if (!lat.empty()) {
      f.lat_best.push_back(*std::min_element(lat.begin(), lat.end()));
      f.lat_typical.push_back(std::accumulate(lat.begin(), lat.end(), 0.0) / lat.size());
    }
  }
  auto median_or_none = [](const std::vector<double>& v) {
    return v.empty() ? std::nullopt : std::optional<double>(median_of(v));
  };
  for (const auto& key : order) {
    const Figures& f = by_host_pair[key];
    HostLink l{key.first,
               key.second,
               median_or_none(f.bw),
               median_or_none(f.lat),
               std::nullopt,
               median_or_none(f.bw_best),
               median_or_none(f.lat_best),
               median_or_none(f.bw_typical),
               median_or_none(f.lat_typical)};
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

  out.stragglers = suspects_on(out.links, hosts, min_fraction);
  if (!remeasured_any(pairs)) return out;
  // The tournament's suspects, each confirmed by its figures measured again or left unconfirmed
  // (a host slow only when measured again is not named either: the measurements disagree).
  const std::vector<Straggler> suspects = std::move(out.stragglers);
  out.stragglers.clear();
  for (Straggler s : suspects) {
    const MetricRule& rule = s.metric == "bandwidth" ? kRules[0] : kRules[1];
    // A link of a host named on the same metric is that host's (hosts come first).
    const bool of_named_host =
        s.peer && std::any_of(out.stragglers.begin(), out.stragglers.end(), [&](const auto& h) {
          return !h.peer && h.metric == s.metric && (h.host == s.host || h.host == *s.peer);
        });
    if (of_named_host) continue;
    if (confirm(s, rule, out.links, suspects, min_fraction)) {
      out.stragglers.push_back(s);
    } else {
      out.unconfirmed.push_back(s);
    }
  }
  return out;
}

std::vector<std::pair<int, int>> confirmation_pairs(const LinksVerdict& suspects,
                                                    const std::vector<int>& participants,
                                                    const std::vector<std::string>& rank_hosts,
                                                    int peers, int references, int most) {
  std::vector<std::pair<int, int>> out;
  // The first participant of each host, in participant order.
  std::vector<std::string> hosts;
  std::map<std::string, int> rank_of;
  for (int p : participants) {
    const std::string& h = rank_hosts[static_cast<std::size_t>(p)];
    if (rank_of.emplace(h, p).second) hosts.push_back(h);
  }
  const std::size_t all_pairs = hosts.size() * (hosts.size() - 1) / 2;
  if (!hosts.empty() && all_pairs <= static_cast<std::size_t>(most)) {
    // Few hosts: every pair again, so that no host the tournament's noise hid goes unmeasured.
    for (std::size_t i = 0; i < hosts.size(); ++i)
      for (std::size_t j = i + 1; j < hosts.size(); ++j) {
        const int x = rank_of[hosts[i]], y = rank_of[hosts[j]];
        out.push_back({std::min(x, y), std::max(x, y)});
      }
    return out;
  }
  if (suspects.stragglers.empty()) return out;
  std::set<std::string> suspect_hosts;
  std::set<std::pair<std::string, std::string>> suspect_links;
  for (const auto& s : suspects.stragglers) {
    if (s.peer) {
      suspect_links.insert({std::min(s.host, *s.peer), std::max(s.host, *s.peer)});
    } else {
      suspect_hosts.insert(s.host);
    }
  }
  std::vector<std::string> healthy;
  for (const auto& h : hosts)
    if (!suspect_hosts.count(h) && rank_of.count(h)) healthy.push_back(h);
  auto add = [&](const std::string& a, const std::string& b) {
    if (!rank_of.count(a) || !rank_of.count(b) || a == b) return;
    const int x = rank_of[a], y = rank_of[b];
    const std::pair<int, int> pair{std::min(x, y), std::max(x, y)};
    if (std::find(out.begin(), out.end(), pair) == out.end()) out.push_back(pair);
  };
  // Healthy pairs to hold the suspects against, spread over as many hosts as can be.
  std::vector<std::pair<std::string, std::string>> healthy_pairs;
  auto add_healthy = [&](std::size_t i, std::size_t j) {
    const auto& a = healthy[i];
    const auto& b = healthy[j];
    const std::pair<std::string, std::string> key{std::min(a, b), std::max(a, b)};
    if (suspect_links.count(key)) return;
    if (std::find(healthy_pairs.begin(), healthy_pairs.end(), std::make_pair(a, b)) ==
        healthy_pairs.end())
      healthy_pairs.push_back({a, b});
  };
  // Disjoint neighbours first ((0,1), (2,3), ... then (1,2), ...), then the rest.
  for (std::size_t i = 0; i + 1 < healthy.size(); i += 2) add_healthy(i, i + 1);
  for (std::size_t i = 1; i + 1 < healthy.size(); i += 2) add_healthy(i, i + 1);
  for (std::size_t i = 0; i < healthy.size(); ++i)
    for (std::size_t j = i + 2; j < healthy.size(); ++j) add_healthy(i, j);
  const int kept_for_references = std::min(references, static_cast<int>(healthy_pairs.size()));
  const std::size_t budget = static_cast<std::size_t>(std::max(0, most - kept_for_references));
  for (const auto& s : suspects.stragglers) {
    if (out.size() >= budget) break;
    if (s.peer) {
      add(s.host, *s.peer);
      continue;
    }
    int met = 0;
    for (const auto& p : healthy) {
      if (met >= peers || out.size() >= budget) break;
      add(s.host, p);
      ++met;
    }
  }
  for (int k = 0; k < kept_for_references && out.size() < static_cast<std::size_t>(most); ++k)
    add(healthy_pairs[static_cast<std::size_t>(k)].first,
        healthy_pairs[static_cast<std::size_t>(k)].second);
  return out;
}

}  // namespace cb
