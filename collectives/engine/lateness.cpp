#include "collectives/engine/lateness.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "common/error.hpp"
#include "common/median.hpp"

namespace cb {

WaitPattern wait_pattern(Collective c) {
  switch (c) {
    case Collective::Broadcast:
    case Collective::Scatter:
      return WaitPattern::FromRoot;
    case Collective::Reduce:
    case Collective::Gather:
      return WaitPattern::ToRoot;
    case Collective::SendRecv:
      return WaitPattern::None;
    default:
      return WaitPattern::Everyone;  // every rank's data in every result
  }
}

namespace {

constexpr double kNone = std::numeric_limits<double>::lowest();

// Views of the reduced bounds of call k.
struct Bounds {
  const std::vector<double>& v;
  std::size_t calls;
  double latest(std::size_t k) const { return v[k]; }
  double earliest(std::size_t k) const { return -v[calls + k]; }
  double first_exit(std::size_t k) const { return -v[2 * calls + k]; }
  double root(std::size_t k) const { return v[3 * calls + k]; }
};

Bounds view(const std::vector<double>& bounds, const Arrivals& mine) {
  if (bounds.size() != 4 * mine.calls())
    runtime_error("internal: lateness bounds for {} calls, not {}", bounds.size() / 4,
                  mine.calls());
  return {bounds, mine.calls()};
}

// When the rank entering call k waits for someone: the entry it needs (its own where it needs
// no one).
double awaited(const Bounds& b, const Arrivals& mine, std::size_t k, WaitPattern p,
               bool root_here) {
  switch (p) {
    case WaitPattern::Everyone:
      return b.latest(k);
    case WaitPattern::FromRoot:
      return root_here ? mine.entry[k] : b.root(k);
    case WaitPattern::ToRoot:
      return root_here ? b.latest(k) : mine.entry[k];
    case WaitPattern::None:
      break;
  }
  return mine.entry[k];
}

// Its wait at call k: from its entry to the entry it needs, and no longer than it stayed.
double wait_at(const Bounds& b, const Arrivals& mine, std::size_t k, WaitPattern p,
               bool root_here) {
  const double stayed = std::max(0.0, mine.exit[k] - mine.entry[k]);
  return std::clamp(awaited(b, mine, k, p, root_here) - mine.entry[k], 0.0, stayed);
}

std::uint64_t to_ns(double us) {
  return static_cast<std::uint64_t>(std::llround(std::max(0.0, us) * 1000.0));
}

// Whether the others' waits at call k are this rank's doing: it entered last (where every rank
// or the root needs every rank), or it is the root the others need.
bool caused_by(const Bounds& b, const Arrivals& mine, std::size_t k, WaitPattern p,
               bool root_here) {
  switch (p) {
    case WaitPattern::Everyone:
    case WaitPattern::ToRoot:
      return mine.entry[k] == b.latest(k);
    case WaitPattern::FromRoot:
      return root_here;
    case WaitPattern::None:
      break;
  }
  return false;
}

}  // namespace

std::vector<double> bounds_part(const Arrivals& mine, WaitPattern p, bool root_here) {
  const std::size_t n = mine.calls();
  std::vector<double> out(4 * n, kNone);
  for (std::size_t k = 0; k < n; ++k) {
    out[k] = mine.entry[k];
    out[n + k] = -mine.entry[k];
    out[2 * n + k] = -mine.exit[k];
    if (p == WaitPattern::FromRoot && root_here) out[3 * n + k] = mine.entry[k];
  }
  return out;
}

std::vector<std::uint64_t> waits_ns(const Arrivals& mine, const std::vector<double>& bounds,
                                    WaitPattern p, bool root_here) {
  const Bounds b = view(bounds, mine);
  std::vector<std::uint64_t> out(mine.calls());
  for (std::size_t k = 0; k < out.size(); ++k) out[k] = to_ns(wait_at(b, mine, k, p, root_here));
  return out;
}

RankLateness rank_lateness(int rank, const Arrivals& mine, const std::vector<double>& bounds,
                           const std::vector<std::uint64_t>& total_waits_ns, WaitPattern p,
                           bool root_here, double clock_error_us) {
  const Bounds b = view(bounds, mine);
  RankLateness r;
  r.rank = rank;
  r.calls = mine.calls();
  r.clock_error_us = clock_error_us;
  std::vector<double> late, between, late_exit, inside;
  for (std::size_t k = 0; k < mine.calls(); ++k) {
    const double wait = wait_at(b, mine, k, p, root_here);
    late.push_back(mine.entry[k] - b.earliest(k));
    between.push_back(mine.next[k] - mine.exit[k]);
    late_exit.push_back(mine.exit[k] - b.first_exit(k));
    inside.push_back(std::max(0.0, b.first_exit(k) - b.latest(k)));
    r.late_us += late.back();
    r.wait_us += wait;
    if (mine.entry[k] == b.latest(k)) ++r.last_calls;
    if (caused_by(b, mine, k, p, root_here) && k < total_waits_ns.size()) {
      const std::uint64_t own = to_ns(wait);
      const std::uint64_t total = total_waits_ns[k];
      r.caused_us += static_cast<double>(total > own ? total - own : 0) / 1000.0;
    }
    r.time_us += mine.next[k] - mine.entry[k];
    r.between_us += between.back();
    r.late_exit_us += late_exit.back();
    r.inside_us += inside.back();
  }
  r.median_late_us = median_of(std::move(late));
  r.median_between_us = median_of(std::move(between));
  r.median_late_exit_us = median_of(std::move(late_exit));
  r.median_inside_us = median_of(std::move(inside));
  return r;
}

std::vector<RankLateness> lateness_of(const std::vector<Arrivals>& ranks,
                                      const std::vector<int>& first_ranks, int root, WaitPattern p,
                                      const std::vector<double>& clock_errors_us) {
  std::vector<RankLateness> out;
  if (ranks.empty() || p == WaitPattern::None) return out;
  std::vector<double> bounds(4 * ranks.front().calls(), kNone);
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const auto part = bounds_part(ranks[i], p, first_ranks[i] == root);
    if (part.size() != bounds.size()) runtime_error("internal: ranks judged on unequal calls");
    for (std::size_t k = 0; k < bounds.size(); ++k) bounds[k] = std::max(bounds[k], part[k]);
  }
  std::vector<std::uint64_t> totals(ranks.front().calls(), 0);
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const auto w = waits_ns(ranks[i], bounds, p, first_ranks[i] == root);
    for (std::size_t k = 0; k < totals.size(); ++k) totals[k] += w[k];
  }
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    out.push_back(rank_lateness(first_ranks[i], ranks[i], bounds, totals, p, first_ranks[i] == root,
                                clock_errors_us[i]));
  }
  return out;
}

std::vector<RankLateness> measure_lateness(Control& control, int rank, const Arrivals& mine,
                                           WaitPattern p, bool root_here, double clock_error_us) {
  if (p == WaitPattern::None) return {};
  std::vector<double> bounds = bounds_part(mine, p, root_here);
  control.max(bounds.data(), bounds.size());
  std::vector<std::uint64_t> totals = waits_ns(mine, bounds, p, root_here);
  control.sum(totals.data(), totals.size());
  const RankLateness me = rank_lateness(rank, mine, bounds, totals, p, root_here, clock_error_us);
  std::vector<RankLateness> out;
  for (const std::string& s : control.allgather(to_text(me))) {
    out.push_back(rank_lateness_from_text(s));
  }
  return out;
}

Arrivals judged_calls(const std::vector<CallStamps>& batches, const ClockLine& line,
                      double skew_us) {
  Arrivals out;
  auto common = [&](double stamp) {
    const double local = stamp + skew_us;
    return local - line.offset_at(local);
  };
  for (const CallStamps& b : batches) {
    const std::size_t n = std::min(b.entry.size(), b.exit.size());
    for (std::size_t k = 1; k < n; ++k) {
      out.entry.push_back(common(b.entry[k]));
      out.exit.push_back(common(b.exit[k]));
      out.next.push_back(common(k + 1 < n ? b.entry[k + 1] : b.exit[k]));
    }
  }
  return out;
}

std::string to_text(const RankLateness& r) {
  return fmt::format(
      "{} {} {} {:.17g} {:.17g} {:.17g} {:.17g} {:.17g} {:.17g} {:.17g} {:.17g} {:.17g} {:.17g} "
      "{:.17g} {:.17g}",
      r.rank, r.calls, r.last_calls, r.late_us, r.wait_us, r.caused_us, r.time_us, r.between_us,
      r.late_exit_us, r.inside_us, r.clock_error_us, r.median_late_us, r.median_between_us,
      r.median_late_exit_us, r.median_inside_us);
}

RankLateness rank_lateness_from_text(const std::string& text) {
  std::istringstream in(text);
  RankLateness r;
  if (!(in >> r.rank >> r.calls >> r.last_calls >> r.late_us >> r.wait_us >> r.caused_us >>
        r.time_us >> r.between_us >> r.late_exit_us >> r.inside_us >> r.clock_error_us >>
        r.median_late_us >> r.median_between_us >> r.median_late_exit_us >> r.median_inside_us)) {
    runtime_error("internal: bad lateness figures '{}'", text);
  }
  return r;
}

}  // namespace cb
