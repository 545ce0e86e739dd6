// Which component of a multi-rail fabric is slow: per-NIC passes judged rail by rail, then a
// host named on every rail is the host, on one rail its NIC, and a rail slow on most hosts (or
// slower than the other rails) is the rail's switch.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "report/links_verdict.hpp"

namespace cb {

namespace {

struct Rail {
  int index = 0;
  std::string nic;
  std::vector<LinkSample> pairs;
  LinksVerdict verdict;
};

std::vector<Rail> split_rails(const std::vector<LinkSample>& pairs, double min_fraction) {
  std::map<int, Rail> by_index;
  for (const auto& p : pairs) {
    if (!p.nic || !p.rail) continue;
    Rail& r = by_index[*p.rail];
    r.index = *p.rail;
    r.nic = *p.nic;
    r.pairs.push_back(p);
  }
  std::vector<Rail> out;
  for (auto& [index, rail] : by_index) {
    rail.verdict = links_verdict(rail.pairs, min_fraction);
    out.push_back(std::move(rail));
  }
  return out;
}

// The median bandwidth over a rail's links, leaving out the links of hosts named within the
// rail (one bad NIC among 4 hosts is in half of the rail's links) or suspected there and not
// confirmed (their tournament figures are what was not confirmed), or over all of them where
// that leaves none.
std::optional<double> rail_bandwidth(const Rail& r) {
  std::set<std::string> named;
  for (const auto* list : {&r.verdict.stragglers, &r.verdict.unconfirmed})
    for (const auto& s : *list)
      if (s.component == "host") named.insert(s.host);
  std::vector<double> healthy, all;
  for (const auto& l : r.verdict.links) {
    auto x = l.bandwidth_GBps;
    if (!x) continue;
    all.push_back(*x);
    if (!named.count(l.src) && !named.count(l.dst)) healthy.push_back(*x);
  }
  if (all.empty()) return std::nullopt;
  return median_of(healthy.empty() ? all : healthy);
}

bool is_host(const Straggler& s) {
  return s.component == "host";
}

Straggler on_rail(Straggler s, const Rail& r, const std::string& component) {
  s.component = component;
  s.nic = r.nic;
  s.rail = r.index;
  return s;
}

}  // namespace

bool has_rails(const std::vector<LinkSample>& pairs) {
  return std::any_of(pairs.begin(), pairs.end(),
                     [](const LinkSample& p) { return p.nic.has_value(); });
}

LinksVerdict rails_verdict(const std::vector<LinkSample>& pairs, double min_fraction) {
  if (!has_rails(pairs)) return links_verdict(pairs, min_fraction);
  const std::vector<Rail> rails = split_rails(pairs, min_fraction);
  LinksVerdict out;
  for (const auto& r : rails) {
    for (auto l : r.verdict.links) {
      l.nic = r.nic;
      out.links.push_back(l);
    }
    for (auto h : r.verdict.hosts) {
      h.nic = r.nic;
      out.hosts.push_back(h);
    }
  }

  // Rails against each other, on bandwidth: a switch slows every link of its rail alike, which
  // no verdict within the rail can see. (Latency of microseconds differs between healthy rails
  // with what else crosses them, such as the control channel, so it does not name a rail.)
  std::vector<Straggler> named_rails;
  for (const auto& r : rails) {
    std::vector<double> others;
    for (const auto& o : rails)
      if (o.index != r.index)
        if (auto m = rail_bandwidth(o)) others.push_back(*m);
    auto mine = rail_bandwidth(r);
    if (!mine || others.empty()) continue;
    const double ref = median_of(others);
    const double f = ref > 0 ? *mine / ref : 1.0;
    if (f < min_fraction)
      named_rails.push_back({"",
                             std::nullopt,
                             "bandwidth",
                             *mine,
                             ref,
                             f,
                             "rail",
                             r.nic,
                             r.index,
                             0,
                             {},
                             {},
                             {},
                             {}});
  }
  // Or most of a rail's hosts named within it (a switch serving them).
  for (const auto& r : rails) {
    std::set<std::string> hosts, slow;
    for (const auto& h : r.verdict.hosts) hosts.insert(h.host);
    for (const auto& s : r.verdict.stragglers)
      if (is_host(s) && s.metric == "bandwidth") slow.insert(s.host);
    const bool already = std::any_of(named_rails.begin(), named_rails.end(), [&](const auto& s) {
      return s.rail == r.index && s.metric == "bandwidth";
    });
    if (already || hosts.size() < 3 || 2 * slow.size() <= hosts.size()) continue;
    std::vector<double> values;
    double median = 0;
    for (const auto& s : r.verdict.stragglers) {
      if (is_host(s) && s.metric == "bandwidth") {
        values.push_back(s.value);
        median = s.median;
      }
    }
    const double v = median_of(values);
    named_rails.push_back({"",
                           std::nullopt,
                           "bandwidth",
                           v,
                           median,
                           median > 0 ? v / median : 1.0,
                           "rail",
                           r.nic,
                           r.index,
                           0,
                           {},
                           {},
                           {},
                           {}});
  }
  out.stragglers = named_rails;

  // Hosts: named on every rail (two or more) is the host; otherwise the NIC on that rail.
  std::vector<Straggler> nics, links;
  std::set<std::pair<std::string, std::string>> whole;  // (host, metric)
  std::map<std::pair<std::string, std::string>, std::vector<const Straggler*>> per_host;
  for (const auto& r : rails)
    for (const auto& s : r.verdict.stragglers)
      if (is_host(s)) per_host[{s.host, s.metric}].push_back(&s);
  for (const auto& [key, found] : per_host) {
    if (rails.size() < 2 || found.size() < rails.size()) continue;
    std::vector<double> values, medians;
    for (const auto* s : found) {
      values.push_back(s->value);
      medians.push_back(s->median);
    }
    Straggler s = *found.front();
    s.value = median_of(values);
    s.median = median_of(medians);
    s.fraction = s.metric == "bandwidth" ? s.value / s.median : s.median / s.value;
    s.component = "host";
    s.nic.reset();
    s.rail.reset();
    s.slow_rails = static_cast<int>(found.size());
    whole.insert(key);
    out.stragglers.push_back(s);
  }
  for (const auto& r : rails) {
    for (const auto& s : r.verdict.stragglers) {
      if (!is_host(s)) {
        links.push_back(on_rail(s, r, "link"));
      } else if (!whole.count({s.host, s.metric})) {
        nics.push_back(on_rail(s, r, "nic"));
      }
    }
    for (const auto& s : r.verdict.unconfirmed)
      out.unconfirmed.push_back(on_rail(s, r, is_host(s) ? "nic" : "link"));
  }
  out.stragglers.insert(out.stragglers.end(), nics.begin(), nics.end());
  out.stragglers.insert(out.stragglers.end(), links.begin(), links.end());
  return out;
}

std::string straggler_name(const Straggler& s) {
  if (s.component == "rail")
    return fmt::format("rail {} ({})", s.rail.value_or(0), s.nic.value_or("?"));
  std::string where =
      s.nic ? fmt::format(" NIC {} (rail {})", *s.nic, s.rail.value_or(0)) : std::string();
  if (s.peer) return fmt::format("{} -> {}{}", s.host, *s.peer, where);
  return s.host + where;
}

std::string describe_straggler(const Straggler& s) {
  const bool bw = s.metric == "bandwidth";
  const std::string unit = bw ? "GB/s" : "us";
  std::string who, of = "the median", why;
  if (s.component == "rail") {
    who = straggler_name(s);
    of = "the other rails' median";
    why = " (the whole rail: its switch or cabling)";
  } else if (s.component == "link") {
    who = "link " + straggler_name(s);
    if (s.nic) of = "the rail's median";
  } else if (s.component == "nic") {
    who = "host " + straggler_name(s);
    of = "the rail's median";
    why = " (this NIC only: its other rails are fine)";
  } else if (s.slow_rails > 0) {
    who = "host " + s.host;
    of = "its rails' medians";
    why = fmt::format(" (slow on every one of its {} NICs: the host, not a NIC)", s.slow_rails);
  } else {
    who = "host " + s.host;
    why = " (most of its links are slow)";
  }
  std::string again;
  if (s.remeasured && s.remeasured_median && s.noise_floor) {
    again = fmt::format(
        "; measured again{}: {:.3g} {} is {:.2f} of the healthy links' {:.3g} {}, whose lowest "
        "was {:.2f} of it",
        s.peer ? "" : " against other hosts", *s.remeasured, unit,
        s.remeasured_fraction.value_or(0), *s.remeasured_median, unit, *s.noise_floor);
  } else if (s.remeasured) {
    again = fmt::format("; measured again{}: {:.3g} {}, with no healthy link measured beside it",
                        s.peer ? "" : " against other hosts", *s.remeasured, unit);
  }
  return fmt::format("{}: {} {:.3g} {} is {:.2f} of {} {:.3g} {}{}{}", who, s.metric, s.value, unit,
                     s.fraction, of, s.median, unit, why, again);
}

std::string describe_unconfirmed(const Straggler& s) {
  const std::string line = "unconfirmed: " + describe_straggler(s);
  if (!s.remeasured) return line + "; not measured again";
  if (!s.noise_floor) return line;
  return line + ": not beyond that noise";
}

}  // namespace cb
