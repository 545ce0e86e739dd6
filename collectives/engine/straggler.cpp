#include "collectives/engine/straggler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "common/median.hpp"
#include "common/units.hpp"

namespace cb {

double last_share_needed(int n) {
  return n > 0 ? (1.0 + 1.0 / n) / 2 : 1.0;
}

namespace {

void add(RankLateness& into, const RankLateness& r) {
  into.calls += r.calls;
  into.last_calls += r.last_calls;
  into.late_us += r.late_us;
  into.wait_us += r.wait_us;
  into.caused_us += r.caused_us;
  into.time_us += r.time_us;
  into.between_us += r.between_us;
  into.late_exit_us += r.late_exit_us;
  into.inside_us += r.inside_us;
  into.clock_error_us = std::max(into.clock_error_us, r.clock_error_us);
}

bool judged(const LatenessCase& c) {
  return !c.ranks.empty() && c.ranks.front().calls > 0;
}

// The process whose lateness cost the others the most: the first of equal ones (rank order).
std::size_t top_of(const std::vector<RankLateness>& ranks) {
  std::size_t top = 0;
  for (std::size_t i = 1; i < ranks.size(); ++i)
    if (ranks[i].caused_us > ranks[top].caused_us) top = i;
  return top;
}

// The most two processes' stamps may be off against each other: `i`'s error and the largest
// other.
double pair_error(const std::vector<RankLateness>& ranks, std::size_t i) {
  double other = 0;
  for (std::size_t j = 0; j < ranks.size(); ++j)
    if (j != i) other = std::max(other, ranks[j].clock_error_us);
  return ranks[i].clock_error_us + other;
}

double share(double part, double whole) {
  return whole > 0 ? part / whole : 0.0;
}

// A process's figures over every judged case, with its place and the cases' pair errors.
struct Pooled {
  RankLateness sum;
  RankPlace place;
  double clock_error_us = 0;   // against the other processes, the largest over the cases
  int top_cases = 0;           // cases in which it cost the others the most
  std::vector<double> ratios;  // per case: its time per call over the median process's
  // Per case: its medians over the calls.
  std::vector<double> late_exit, inside;
};

double mean(double sum, std::uint64_t calls) {
  return calls ? sum / static_cast<double>(calls) : 0.0;
}

}  // namespace

std::optional<CaseLateness> case_lateness(const LatenessCase& c) {
  if (!judged(c)) return std::nullopt;
  const std::size_t top = top_of(c.ranks);
  const RankLateness& t = c.ranks[top];
  double total_time = 0, total_wait = 0;
  for (const auto& r : c.ranks) {
    total_time += r.time_us;
    total_wait += r.wait_us;
  }
  CaseLateness out;
  out.calls = t.calls;
  out.rank = t.rank;
  if (top < c.places.size()) out.host = c.places[top].host;
  out.last_share = share(static_cast<double>(t.last_calls), static_cast<double>(t.calls));
  out.late_us = mean(t.late_us, t.calls);
  out.delay_cost = share(t.caused_us, total_time - t.time_us);
  out.wait_us = mean(total_wait, t.calls * c.ranks.size());
  out.inside_us = mean(t.inside_us, t.calls);
  out.clock_error_us = pair_error(c.ranks, top);
  return out;
}

std::optional<RankStraggler> judge_straggler(const std::vector<LatenessCase>& cases,
                                             const StragglerRule& rule) {
  std::map<int, Pooled> pooled;  // by rank, in rank order
  std::uint64_t calls = 0;
  double total_time = 0;
  int judged_cases = 0;
  for (const LatenessCase& c : cases) {
    if (!judged(c)) continue;
    ++judged_cases;
    calls += c.ranks.front().calls;
    const std::size_t top = top_of(c.ranks);
    std::vector<double> per_call;
    for (const auto& r : c.ranks) per_call.push_back(mean(r.time_us, r.calls));
    const double median_per_call = median_of(per_call);
    for (std::size_t i = 0; i < c.ranks.size(); ++i) {
      const RankLateness& r = c.ranks[i];
      Pooled& p = pooled[r.rank];
      p.sum.rank = r.rank;
      add(p.sum, r);
      if (i < c.places.size()) p.place = c.places[i];
      p.clock_error_us = std::max(p.clock_error_us, pair_error(c.ranks, i));
      if (i == top) ++p.top_cases;
      p.ratios.push_back(median_per_call > 0 ? per_call[i] / median_per_call : 1.0);
      p.late_exit.push_back(r.median_late_exit_us);
      p.inside.push_back(r.median_inside_us);
      total_time += r.time_us;
    }
  }
  if (pooled.empty()) return std::nullopt;

  const Pooled* top = nullptr;
  for (const auto& [rank, p] : pooled)
    if (!top || p.sum.caused_us > top->sum.caused_us) top = &p;
  const int n = static_cast<int>(pooled.size());
  const double calls_d = static_cast<double>(calls);

  // The processes of each host, and which hosts have their ranks late together.
  std::map<std::string, std::vector<const Pooled*>> by_host;
  for (const auto& [rank, p] : pooled) by_host[p.place.host].push_back(&p);
  auto together = [&](const std::vector<const Pooled*>& ranks) {
    if (ranks.size() < 2) return false;
    double latest = 0, earliest = -1, error = 0;
    for (const Pooled* p : ranks) {
      const double late = mean(p->sum.late_us, p->sum.calls);
      latest = std::max(latest, late);
      earliest = earliest < 0 ? late : std::min(earliest, late);
      error = std::max(error, p->clock_error_us);
    }
    return latest > rule.clock_margin * error && earliest >= rule.together * latest;
  };

  RankStraggler s;
  auto describe_rank = [&](const Pooled& p) {
    s.rank = p.sum.rank;
    s.host = p.place.host;
    s.gpu = p.place.gpu;
    s.core = p.place.core;
    s.slowest_cases = p.top_cases;
    s.cases = judged_cases;
    s.ratio = median_of(p.ratios);
    s.calls = calls;
    s.late_us = mean(p.sum.late_us, calls);
    s.between_us = mean(p.sum.between_us, calls);
    s.late_exit_us = mean(p.sum.late_exit_us, calls);
    s.inside_us = mean(p.sum.inside_us, calls);
    s.clock_error_us = p.clock_error_us;
    // Before the call when its own time between calls, beyond the others' (nothing runs between
    // their calls: 0), is at least half of what the others waited for it per call.
    std::vector<double> others_between;
    for (const auto& [rank, q] : pooled)
      if (rank != p.sum.rank) others_between.push_back(mean(q.sum.between_us, calls));
    const double excess = s.between_us - median_of(others_between);
    const double waited = n > 1 ? p.sum.caused_us / (calls_d * (n - 1)) : 0.0;
    s.where =
        excess > 0 && excess >= rule.before_share * waited ? "before the call" : "inside the call";
  };
  // Lateness from inside the call must hold case after case, beyond the call's own time.
  auto inside_holds = [&](const Pooled& p) {
    return judged_cases >= rule.min_cases_inside &&
           p.top_cases >= rule.min_case_share * judged_cases &&
           median_of(p.late_exit) > median_of(p.inside);
  };
  // Figures of a group of processes (one, or a host's): what the others waited for them.
  struct Group {
    std::uint64_t last_calls = 0;
    double caused_us = 0, time_us = 0;
  };
  auto group_of = [&](const std::vector<const Pooled*>& ranks) {
    Group g;
    for (const Pooled* p : ranks) {
      g.last_calls += p->sum.last_calls;
      g.caused_us += p->sum.caused_us;
      g.time_us += p->sum.time_us;
    }
    return g;
  };
  auto set_group = [&](const Group& g, int others, int participants) {
    s.last_calls = g.last_calls;
    s.participants = participants;
    s.delay_cost = share(g.caused_us, total_time - g.time_us);
    s.wait_us = calls && others > 0 ? g.caused_us / (calls_d * others) : 0.0;
  };
  auto holds = [&](const Group& g, int participants) {
    return calls >= rule.min_calls &&
           static_cast<double>(g.last_calls) >= last_share_needed(participants) * calls_d &&
           share(g.caused_us, total_time - g.time_us) >= rule.min_delay_cost;
  };

  describe_rank(*top);
  const Group alone = group_of({top});
  set_group(alone, n - 1, n);
  const bool rank_found = holds(alone, n) && s.late_us > rule.clock_margin * s.clock_error_us &&
                          (s.where == "before the call" || inside_holds(*top));

  const int hosts = static_cast<int>(by_host.size());
  const auto& own_host = by_host[top->place.host];
  if (rank_found) {
    s.found = true;
    if (hosts >= 2 && together(own_host)) {
      s.component = "host";
      for (const Pooled* p : own_host) s.host_ranks.push_back(p->sum.rank);
      set_group(group_of(own_host), n - static_cast<int>(own_host.size()), hosts);
    }
    return s;
  }
  if (hosts >= 2) {
    // Ranks of one host late together share the last place between them: judge the host.
    const std::vector<const Pooled*>* worst = nullptr;
    double worst_caused = -1;
    for (const auto& [host, ranks] : by_host) {
      const double caused = group_of(ranks).caused_us;
      if (caused > worst_caused) {
        worst_caused = caused;
        worst = &ranks;
      }
    }
    const Group g = group_of(*worst);
    const Pooled* named = worst->front();
    for (const Pooled* p : *worst)
      if (p->sum.caused_us > named->sum.caused_us) named = p;
    const RankStraggler alone_figures = s;
    describe_rank(*named);
    const bool before = s.where == "before the call";
    s = alone_figures;
    if (together(*worst) && holds(g, hosts) && (before || inside_holds(*named))) {
      describe_rank(*named);
      s.found = true;
      s.component = "host";
      for (const Pooled* p : *worst) s.host_ranks.push_back(p->sum.rank);
      set_group(g, n - static_cast<int>(worst->size()), hosts);
    }
  }
  return s;
}

namespace {

std::string place_of(const RankStraggler& s) {
  std::string place = s.host;
  if (s.gpu) {
    place += fmt::format(", GPU {}", *s.gpu);
  } else if (s.core) {
    place += fmt::format(", core {}", *s.core);
  }
  return place;
}

std::string ranks_list(const std::vector<int>& ranks) {
  std::string out;
  for (int r : ranks) out += (out.empty() ? "" : ", ") + std::to_string(r);
  return out;
}

}  // namespace

std::string straggler_warning(const RankStraggler& s, const StragglerRule& rule) {
  const bool host = s.component == "host";
  const std::string who =
      host ? fmt::format(
                 "rank {} ({}) and every rank of host {} (ranks {}) entered the calls "
                 "late together: the host (its CPU, memory or NIC), not one rank; its "
                 "ranks entered last in {} of {} calls, rank {}",
                 s.rank, place_of(s), s.host, ranks_list(s.host_ranks), s.last_calls, s.calls,
                 s.rank)
           : fmt::format("rank {} ({}) entered last in {} of {} calls,", s.rank, place_of(s),
                         s.last_calls, s.calls);
  const std::string where =
      s.where == "before the call"
          ? fmt::format(
                "late before the call ({} of its own between calls), not slow inside it "
                "(the call takes {} once every rank is in)",
                format_time_us(s.between_us), format_time_us(s.inside_us))
          : fmt::format(
                "late from inside the previous call (it left each {} after the first "
                "rank out: its link, its reduction or its core)",
                format_time_us(s.late_exit_us));
  return fmt::format(
      "straggler: {} {} after the first rank on average; the others waited for {} {} a call, "
      "{:.0f}% of their time (the delay cost): {}; beyond noise: last in at least {:.3g}% of {} "
      "or more calls (halfway from 1 in {} to all), a delay cost of {:.0f}% or more, and late by "
      "more than {:g}x the clock error ({})",
      who, format_time_us(s.late_us), host ? "them" : "it", format_time_us(s.wait_us),
      s.delay_cost * 100, where, last_share_needed(s.participants) * 100, rule.min_calls,
      s.participants, rule.min_delay_cost * 100, rule.clock_margin,
      format_time_us(s.clock_error_us));
}

}  // namespace cb
