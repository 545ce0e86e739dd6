#include "probes/links.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <ostream>
#include <set>

#include "common/error.hpp"
#include "common/host_name.hpp"
#include "common/schema.hpp"
#include "common/text_table.hpp"
#include "common/units.hpp"
#include "probes/links_schedule.hpp"

namespace cb {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// One sample: `window` messages from `src` to `dst`, then a one-byte acknowledgement; the
// sender's clock runs from the first send to the acknowledgement. Returns seconds at `src`.
double bandwidth_round(Control& control, int me, int src, int dst, std::vector<char>& buf,
                       const LinksOptions& o) {
  char ack = 0;
  if (me == src) {
    auto t0 = Clock::now();
    control.send(dst, buf.data(), o.bytes, o.window);
    control.recv(dst, &ack, 1);
    return seconds_since(t0);
  }
  control.recv(src, buf.data(), o.bytes, o.window);
  control.send(src, &ack, 1);
  return 0;
}

// `iters` 8-byte round trips between a and b; appends each one's one-way microseconds at `a`.
void pingpong(Control& control, int me, int a, int b, int iters, std::vector<double>& us) {
  char msg[8] = {};
  for (int i = 0; i < iters; ++i) {
    auto t0 = Clock::now();
    if (me == a) {
      control.send(b, msg, sizeof msg);
      control.recv(b, msg, sizeof msg);
      us.push_back(seconds_since(t0) / 2.0 * 1e6);
    } else {
      control.recv(a, msg, sizeof msg);
      control.send(a, msg, sizeof msg);
    }
  }
}

// Best bandwidth (GB/s) of `repeats` samples from `src` to `dst` after one warm-up; meaningful
// at `src`. The best, not the median: on a shared machine a descheduled rank only ever makes a
// link look slower, and a link throttled below a rate never beats it.
double bandwidth(Control& control, int me, int src, int dst, std::vector<char>& buf,
                 const LinksOptions& o) {
  bandwidth_round(control, me, src, dst, buf, o);  // connection set-up, registration
  double best = 1e300;
  for (int k = 0; k < o.repeats; ++k)
    best = std::min(best, bandwidth_round(control, me, src, dst, buf, o));
  return static_cast<double>(o.bytes) * o.window / best / 1e9;
}

// The median one-way time of repeats x latency_iters round trips after a warm-up (the median
// of single round trips: a stalled one does not move it).
double latency(Control& control, int me, int a, int b, const LinksOptions& o) {
  std::vector<double> warm, us;
  pingpong(control, me, a, b, std::max(1, o.latency_iters / 10), warm);
  pingpong(control, me, a, b, o.repeats * o.latency_iters, us);
  return me == a ? median_of(us) : 0;
}

constexpr int kConfirmPasses = 2;

// Measures each pair (a < b) at the same time: a -> b, then b -> a, then latency, each phase
// started together. Appends what this rank measured as sender to `mine`. Ranks with no partner
// wait in a barrier that leaves the cores to the pairs being measured.
void measure_round(Control& control, int rank, const std::vector<std::pair<int, int>>& pairs,
                   std::vector<char>& buf, const LinksOptions& o, std::vector<double>& mine) {
  int a = -1, b = -1;
  for (const auto& [x, y] : pairs) {
    if (x == rank || y == rank) {
      a = x;
      b = y;
    }
  }
  const bool in = a >= 0;
  double ab = 0, ba = 0, us = 0;
  control.quiet_barrier();
  if (in) ab = bandwidth(control, rank, a, b, buf, o);
  control.quiet_barrier();
  if (in) ba = bandwidth(control, rank, b, a, buf, o);
  control.quiet_barrier();
  if (in) us = latency(control, rank, a, b, o);
  if (in && rank == a) mine.insert(mine.end(), {double(a), double(b), ab, us});
  if (in && rank == b) mine.insert(mine.end(), {double(b), double(a), ba, -1});
}

// Every rank's `mine`, concatenated in rank order, on every rank.
std::vector<double> gather_all(Control& control, const std::vector<double>& mine) {
  std::string bytes(mine.size() * sizeof(double), '\0');
  if (!mine.empty()) std::memcpy(bytes.data(), mine.data(), bytes.size());
  std::vector<double> all;
  for (const auto& theirs : control.allgather(bytes)) {
    std::size_t at = all.size();
    all.resize(at + theirs.size() / sizeof(double));
    if (!theirs.empty()) std::memcpy(all.data() + at, theirs.data(), theirs.size());
  }
  return all;
}

// What rank 0 holds, on every rank.
std::vector<int> from_rank_0(Control& control, const std::vector<int>& mine) {
  std::string bytes(mine.size() * sizeof(int), '\0');
  if (!mine.empty()) std::memcpy(bytes.data(), mine.data(), bytes.size());
  const std::string first = control.allgather(control.rank() == 0 ? bytes : std::string())[0];
  std::vector<int> out(first.size() / sizeof(int));
  if (!out.empty()) std::memcpy(out.data(), first.data(), first.size());
  return out;
}

// Merges gathered measurements into r.pairs: new pairs are added, a pair measured again keeps
// its best bandwidth and latency. Latency is measured by the lower rank and holds both ways.
void add_measurements(LinksResult& r, const std::vector<double>& all) {
  auto at = [&](std::size_t i) { return all[i]; };
  std::map<std::pair<int, int>, double> lat;
  for (std::size_t i = 0; i + 3 < all.size(); i += 4) {
    if (at(i + 3) >= 0) {
      int s = static_cast<int>(at(i)), d = static_cast<int>(at(i + 1));
      lat[{s, d}] = lat[{d, s}] = at(i + 3);
    }
  }
  for (std::size_t i = 0; i + 3 < all.size(); i += 4) {
    int s = static_cast<int>(at(i)), d = static_cast<int>(at(i + 1));
    double bw = at(i + 2), us = lat.count({s, d}) ? lat[{s, d}] : std::nan("");
    auto it = std::find_if(r.pairs.begin(), r.pairs.end(),
                           [&](const LinkSample& p) { return p.src_rank == s && p.dst_rank == d; });
    if (it == r.pairs.end()) {
      r.pairs.push_back({s, d, r.hosts[static_cast<std::size_t>(s)],
                         r.hosts[static_cast<std::size_t>(d)], bw,
                         std::isnan(us) ? std::nullopt : std::optional<double>(us)});
      continue;
    }
    it->bandwidth_GBps = std::max(it->bandwidth_GBps.value_or(0), bw);
    if (!std::isnan(us)) it->latency_us = std::min(it->latency_us.value_or(us), us);
  }
  std::sort(r.pairs.begin(), r.pairs.end(), [](const LinkSample& x, const LinkSample& y) {
    return std::tie(x.src_rank, x.dst_rank) < std::tie(y.src_rank, y.dst_rank);
  });
}

// The rank pairs (a < b) behind the current stragglers, flattened: every pair between two
// hosts one of which is a straggler host, or the hosts of a straggler link.
std::vector<int> suspects(const LinksResult& r) {
  std::set<std::pair<int, int>> out;
  for (const auto& p : r.pairs) {
    if (p.src_host == p.dst_host) continue;
    for (const auto& s : r.verdict.stragglers) {
      bool hit = s.peer ? ((p.src_host == s.host && p.dst_host == *s.peer) ||
                           (p.src_host == *s.peer && p.dst_host == s.host))
                        : (p.src_host == s.host || p.dst_host == s.host);
      if (hit) out.insert({std::min(p.src_rank, p.dst_rank), std::max(p.src_rank, p.dst_rank)});
    }
  }
  std::vector<int> flat;
  for (const auto& [a, b] : out) flat.insert(flat.end(), {a, b});
  return flat;
}

}  // namespace

void check_links_ranks(int nranks) {
  if (nranks < 2) {
    usage_error(
        "probe links needs at least 2 ranks: launch it as mpirun -np N commbench probe links");
  }
}

void check_links_options(const LinksOptions& o) {
  if (o.bytes == 0 || o.bytes > (1ULL << 30))
    usage_error("invalid --size {}: expected 1 byte to 1 GiB", o.bytes);
}

LinksResult measure_links(const LinksOptions& o, Control& control) {
  const int rank = control.rank();
  const int n = control.size();
  check_links_ranks(n);
  LinksResult r;
  r.nranks = n;
  r.options = o;
  r.hosts = control.allgather(host_name());

  // Who takes part: every rank, or the first rank on each host.
  std::map<std::string, int> per_host_count;
  for (const auto& h : r.hosts) ++per_host_count[h];
  const bool shared = std::any_of(per_host_count.begin(), per_host_count.end(),
                                  [](const auto& e) { return e.second > 1; });
  r.per_host = o.per_host == PerHost::Yes ||
               (o.per_host == PerHost::Auto && shared && per_host_count.size() > 1);
  for (int i = 0; i < n; ++i) {
    const auto& h = r.hosts[static_cast<std::size_t>(i)];
    if (!r.per_host || std::find(r.hosts.begin(), r.hosts.end(), h) - r.hosts.begin() == i)
      r.participants.push_back(i);
  }
  const int p = static_cast<int>(r.participants.size());
  if (p < 2) {
    usage_error("probe links --per-host needs ranks on at least 2 hosts (all {} are on {})", n,
                r.hosts.front());
  }
  // The same schedule on every rank: rank 0 picks the sampling seed.
  std::uint64_t seed =
      rank == 0 ? static_cast<std::uint64_t>(Clock::now().time_since_epoch().count()) : 0;
  control.sum(&seed, 1);
  const std::vector<LinkRound> rounds =
      o.sample > 0 ? sampled_rounds(p, o.sample, seed) : tournament_rounds(p);
  r.rounds = static_cast<int>(rounds.size());

  std::vector<char> buf(o.bytes, 1);
  control.quiet_barrier();
  const auto t0 = Clock::now();
  std::vector<double> mine;  // src, dst, GB/s, us (-1: not measured there) per direction sent
  for (const auto& round : rounds) {
    std::vector<std::pair<int, int>> pairs;
    for (const auto& pair : round)
      pairs.emplace_back(r.participants[static_cast<std::size_t>(pair.a)],
                         r.participants[static_cast<std::size_t>(pair.b)]);
    measure_round(control, rank, pairs, buf, o, mine);
  }
  add_measurements(r, gather_all(control, mine));
  r.verdict = links_verdict(r.pairs, o.min_fraction);
  // Confirmation: the rank pairs behind each straggler are measured again, one pair at a time
  // with three times the samples, up to twice; each figure keeps its best. A rank descheduled by
  // other work on a shared machine only makes one measurement slow, a slow link stays slow.
  // Rank 0's list of suspects is the one every rank follows.
  for (int pass = 0; pass < kConfirmPasses; ++pass) {
    const std::vector<int> again = from_rank_0(control, suspects(r));  // a, b, a, b, ...
    const int count = static_cast<int>(again.size());
    if (count == 0) break;
    mine.clear();
    LinksOptions longer = o;  // three times the samples
    longer.repeats = 3 * o.repeats;
    for (int k = 0; k + 1 < count; k += 2)
      measure_round(control, rank,
                    {{again[static_cast<std::size_t>(k)], again[static_cast<std::size_t>(k + 1)]}},
                    buf, longer, mine);
    add_measurements(r, gather_all(control, mine));
    r.verdict = links_verdict(r.pairs, o.min_fraction);
    r.confirmations += count / 2;
  }
  control.quiet_barrier();
  r.seconds = seconds_since(t0);
  return r;
}

namespace {

nlohmann::json opt(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

std::string describe(const Straggler& s) {
  const bool bw = s.metric == "bandwidth";
  std::string unit = bw ? "GB/s" : "us";
  std::string who =
      s.peer ? fmt::format("link {} -> {}", s.host, *s.peer) : fmt::format("host {}", s.host);
  return fmt::format("{}: {} {:.3g} {} is {:.2f} of the median {:.3g} {}{}", who, s.metric, s.value,
                     unit, s.fraction, s.median, unit,
                     s.peer ? "" : " (most of its links are slow)");
}

}  // namespace

nlohmann::json links_to_json(const LinksResult& r) {
  nlohmann::json pairs = nlohmann::json::array(), hosts = nlohmann::json::array(),
                 stragglers = nlohmann::json::array();
  for (const auto& p : r.pairs) {
    pairs.push_back({{"src_rank", p.src_rank},
                     {"dst_rank", p.dst_rank},
                     {"src_host", p.src_host},
                     {"dst_host", p.dst_host},
                     {"bandwidth_GBps", opt(p.bandwidth_GBps)},
                     {"latency_us", opt(p.latency_us)}});
  }
  for (const auto& h : r.verdict.hosts) {
    hosts.push_back({{"host", h.host},
                     {"median_GBps", opt(h.median_GBps)},
                     {"min_GBps", opt(h.min_GBps)},
                     {"median_latency_us", opt(h.median_latency_us)}});
  }
  for (const auto& s : r.verdict.stragglers) {
    stragglers.push_back({{"host", s.host},
                          {"peer", s.peer ? nlohmann::json(*s.peer) : nlohmann::json(nullptr)},
                          {"metric", s.metric},
                          {"value", s.value},
                          {"median", s.median},
                          {"fraction", s.fraction}});
  }
  nlohmann::json meta = {{"nranks", r.nranks},
                         {"hosts", r.hosts},
                         {"participants", r.participants},
                         {"per_host", r.per_host},
                         {"schedule", r.options.sample > 0 ? "sampled" : "tournament"},
                         {"sample", r.options.sample},
                         {"rounds", r.rounds},
                         {"seconds", r.seconds},
                         {"confirmations", r.confirmations},
                         {"bytes", r.options.bytes},
                         {"window", r.options.window},
                         {"repeats", r.options.repeats},
                         {"latency_iters", r.options.latency_iters},
                         {"min_fraction", r.options.min_fraction}};
  return {{"schema", kLinksSchema},
          {"meta", meta},
          {"pairs", pairs},
          {"hosts", hosts},
          {"stragglers", stragglers}};
}

void print_links(const LinksResult& r, std::ostream& out) {
  const auto& v = r.verdict;
  out << fmt::format(
      "Stragglers (below {:g} of the median bandwidth, or above 1/{:g} of the "
      "median latency):\n",
      r.options.min_fraction, r.options.min_fraction);
  if (v.stragglers.empty()) out << "  none\n";
  for (const auto& s : v.stragglers) out << "  " << describe(s) << "\n";

  out << fmt::format(
      "\nHosts (over their links to other hosts; 1 GB = 1e9 bytes), {} {}, {} round{} and {} "
      "pair{} measured again, {:.1f} s\n",
      r.participants.size(), r.per_host ? "hosts (one rank each)" : "ranks", r.rounds,
      r.rounds == 1 ? "" : "s", r.confirmations, r.confirmations == 1 ? "" : "s", r.seconds);
  TextTable h;
  h.set_header({"host", "median GB/s", "min GB/s", "median latency us"});
  auto num = [](const std::optional<double>& x, const char* spec) {
    return x ? fmt::format(fmt::runtime(spec), *x) : std::string("N/A");
  };
  for (const auto& e : v.hosts)
    h.add_row({e.host, num(e.median_GBps, "{:.3f}"), num(e.min_GBps, "{:.3f}"),
               num(e.median_latency_us, "{:.2f}")});
  if (!h.empty()) h.print(out, "  ");

  out << fmt::format(
      "\nRank pairs ({} messages, window {}, best of {}; latency: half an 8-byte round trip, "
      "median of {} round trips)\n",
      format_size(r.options.bytes), r.options.window, r.options.repeats,
      r.options.repeats * r.options.latency_iters);
  TextTable t;
  t.set_header({"src", "dst", "src host", "dst host", "GB/s", "latency us"});
  for (const auto& p : r.pairs) {
    t.add_row({std::to_string(p.src_rank), std::to_string(p.dst_rank), p.src_host, p.dst_host,
               num(p.bandwidth_GBps, "{:.3f}"), num(p.latency_us, "{:.2f}")});
  }
  t.print(out, "  ");
}

}  // namespace cb
