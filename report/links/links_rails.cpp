// Which component of a multi-rail fabric is slow: per-NIC passes judged rail by rail, then a
// host named on every rail is the host, on one rail its NIC, and a rail slow on most hosts (or
// slower than the other rails) is the rail's switch.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "report/links/links_verdict.hpp"

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
std::optional<double> rail_bandwidth(const Rail& r, std::optional<double> HostLink::*figure) {
  std::set<std::string> named;
  for (const auto* list : {&r.verdict.stragglers, &r.verdict.unconfirmed})
    for (const auto& s : *list)
      if (s.component == "host") named.insert(s.host);
  std::vector<double> healthy, all;
  for (const auto& l : r.verdict.links) {
    auto x = l.*figure;
    if (!x) continue;
    all.push_back(*x);
    if (!named.count(l.src) && !named.count(l.dst)) healthy.push_back(*x);
  }
  if (all.empty()) return std::nullopt;
  return median_of(healthy.empty() ? all : healthy);
}

// The lowest of a rail's healthy links measured again (the mean of its measurements), over
// their median best (its noise).
std::optional<double> rail_floor(const Rail& r) {
  const auto median = rail_bandwidth(r, &HostLink::remeasured_GBps);
  if (!median || *median <= 0) return std::nullopt;
  std::set<std::string> named;
  for (const auto* list : {&r.verdict.stragglers, &r.verdict.unconfirmed})
    for (const auto& s : *list)
      if (s.component == "host") named.insert(s.host);
  std::optional<double> floor;
  for (const auto& l : r.verdict.links) {
    if (!l.remeasured_typical_GBps || named.count(l.src) || named.count(l.dst)) continue;
    floor = std::min(floor.value_or(1.0), *l.remeasured_typical_GBps / *median);
  }
  return floor;
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
  // Where the rails' links were measured again, a rail is named only when those figures (each
  // link's best) agree, beyond the noise of the other rails' healthy links as within a rail.
  std::vector<Straggler> named_rails;
  const bool again = std::any_of(pairs.begin(), pairs.end(),
                                 [](const LinkSample& p) { return !p.remeasured_GBps.empty(); });
  auto against_others =
      [&](const Rail& r,
          std::optional<double> HostLink::*figure) -> std::optional<std::pair<double, double>> {
    std::vector<double> others;
    for (const auto& o : rails)
      if (o.index != r.index)
        if (auto m = rail_bandwidth(o, figure)) others.push_back(*m);
    auto mine = rail_bandwidth(r, figure);
    if (!mine || others.empty()) return std::nullopt;
    return std::make_pair(*mine, median_of(others));
  };
  for (const auto& r : rails) {
    auto first = against_others(r, &HostLink::bandwidth_GBps);
    if (!first) continue;
    const auto [mine, ref] = *first;
    const double f = ref > 0 ? mine / ref : 1.0;
    if (f >= min_fraction) continue;
    Straggler s{"",    std::nullopt, "bandwidth", mine, ref, f,  "rail",
                r.nic, r.index,      0,           {},   {},  {}, {}};
    if (!again) {
      named_rails.push_back(s);
      continue;
    }
    auto second = against_others(r, &HostLink::remeasured_GBps);
    double floor = 1.0;
    for (const auto& o : rails)
      if (o.index != r.index) floor = std::min(floor, rail_floor(o).value_or(1.0));
    if (second) {
      s.remeasured = second->first;
      s.remeasured_median = second->second;
      s.remeasured_fraction = second->second > 0 ? second->first / second->second : 1.0;
      s.noise_floor = floor;
    }
    if (second && *s.remeasured_fraction < std::min(min_fraction, floor * floor)) {
      named_rails.push_back(s);
    } else {
      out.unconfirmed.push_back(s);
    }
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

namespace {

struct Wording {
  std::string unit, who, of = "the median", why;
};

Wording wording(const Straggler& s) {
  Wording w;
  w.unit = s.metric == "bandwidth" ? "GB/s" : "us";
  if (s.component == "rail") {
    w.who = straggler_name(s);
    w.of = "the other rails' median";
    w.why = " (the whole rail: its switch or cabling)";
  } else if (s.component == "link") {
    w.who = "link " + straggler_name(s);
    if (s.nic) w.of = "the rail's median";
  } else if (s.component == "nic") {
    w.who = "host " + straggler_name(s);
    w.of = "the rail's median";
    w.why = " (this NIC only: its other rails are fine)";
  } else if (s.slow_rails > 0) {
    w.who = "host " + s.host;
    w.of = "its rails' medians";
    w.why = fmt::format(" (slow on every one of its {} NICs: the host, not a NIC)", s.slow_rails);
  } else {
    w.who = "host " + s.host;
    w.why = " (most of its links are slow)";
  }
  return w;
}

// "0.012 GB/s measured again against other hosts, 0.01 of the healthy links' 1.2 GB/s".
std::string again(const Straggler& s, const Wording& w) {
  std::string out = fmt::format("{:.3g} {} measured again{}", *s.remeasured, w.unit,
                                s.peer || s.component == "rail" ? "" : " against other hosts");
  if (s.remeasured_median)
    out += fmt::format(", {:.2f} of {} {:.3g} {}", s.remeasured_fraction.value_or(0),
                       s.component == "rail" ? "the other rails'" : "the healthy links'",
                       *s.remeasured_median, w.unit);
  return out;
}

std::string tournament(const Straggler& s, const Wording& w) {
  return fmt::format("{:.3g} {} in the tournament, {:.2f} of {} {:.3g} {}", s.value, w.unit,
                     s.fraction, w.of, s.median, w.unit);
}

}  // namespace

std::string describe_straggler(const Straggler& s) {
  const Wording w = wording(s);
  if (s.remeasured && s.noise_floor)
    return fmt::format("{}: {} {} and beyond the lowest of them ({:.2f} of it){}; {}", w.who,
                       s.metric, again(s, w), *s.noise_floor, w.why, tournament(s, w));
  const std::string line =
      fmt::format("{}: {} {:.3g} {} is {:.2f} of {} {:.3g} {}{}", w.who, s.metric, s.value, w.unit,
                  s.fraction, w.of, s.median, w.unit, w.why);
  return s.remeasured ? line + "; " + again(s, w) : line;
}

std::string describe_unconfirmed(const Straggler& s) {
  const Wording w = wording(s);
  const std::string first =
      fmt::format("unconfirmed: {}: {} {}{}", w.who, s.metric, tournament(s, w), w.why);
  if (!s.remeasured) return first + "; not measured again";
  if (!s.noise_floor) return first + ", but " + again(s, w) + ", with no healthy link beside it";
  return fmt::format("{}, but {}: not beyond the lowest of them ({:.2f} of it)", first, again(s, w),
                     *s.noise_floor);
}

}  // namespace cb
