#include "probes/links.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <ostream>
#include <set>

#include "common/clock.hpp"
#include "common/error.hpp"
#include "common/host_name.hpp"
#include "common/schema.hpp"
#include "common/text_table.hpp"
#include "common/units.hpp"
#include "probes/links_hcas.hpp"
#include "probes/links_nics.hpp"
#include "probes/links_passes.hpp"
#include "probes/links_schedule.hpp"
#include "probes/links_tcp.hpp"
#include "probes/links_transport.hpp"

namespace cb {

namespace {

using Clock = std::chrono::steady_clock;

// Confirmation: the suspects are measured again this many times, after the tournament.
constexpr int kConfirmPasses = 2;
// A confirmation pass measures at most this many rank pairs (one at a time, each bounded):
// suspects against other peers, and healthy pairs beside them for the noise between links.
constexpr int kMostConfirmPairs = 8;
// Confirmation samples: this many times the samples of the tournament.
constexpr int kConfirmSampleFactor = 1;

SampleLimits limits_of(const LinksOptions& o, int sample_factor = 1) {
  return {o.bytes, o.window, sample_factor * o.repeats, o.sample_time, o.latency_iters};
}

// Measures each pair (a < b) at the same time: a -> b, then b -> a, then latency, each phase
// started together. Appends what this rank measured as sender to `mine`. Ranks with no partner
// wait in a barrier that leaves the cores to the pairs being measured.
void measure_round(Control& control, PairTransport& link, int rank,
                   const std::vector<std::pair<int, int>>& pairs, const SampleLimits& l,
                   std::vector<double>& mine) {
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
  if (in) ab = link.bandwidth(rank, a, b, l);
  control.quiet_barrier();
  if (in) ba = link.bandwidth(rank, b, a, l);
  control.quiet_barrier();
  if (in) us = link.latency(rank, a, b, l);
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

// Merges gathered measurements into `pairs` (one pass's): new pairs are added, a pair measured
// again keeps its best bandwidth and latency. Latency is measured by the lower rank and holds
// both ways.
void add_measurements(std::vector<LinkSample>& pairs, const std::vector<std::string>& hosts,
                      const std::vector<double>& all, const std::optional<std::string>& nic,
                      std::optional<int> rail) {
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
    auto it = std::find_if(pairs.begin(), pairs.end(),
                           [&](const LinkSample& p) { return p.src_rank == s && p.dst_rank == d; });
    if (it == pairs.end()) {
      pairs.push_back({s,
                       d,
                       hosts[static_cast<std::size_t>(s)],
                       hosts[static_cast<std::size_t>(d)],
                       bw,
                       std::isnan(us) ? std::nullopt : std::optional<double>(us),
                       nic,
                       rail,
                       {},
                       {}});
      continue;
    }
    it->bandwidth_GBps = std::max(it->bandwidth_GBps.value_or(0), bw);
    if (!std::isnan(us)) it->latency_us = std::min(it->latency_us.value_or(us), us);
  }
  std::sort(pairs.begin(), pairs.end(), [](const LinkSample& x, const LinkSample& y) {
    return std::tie(x.src_rank, x.dst_rank) < std::tie(y.src_rank, y.dst_rank);
  });
}

// Merges a confirmation pass's measurements into `pairs`: each figure measured again is added to
// remeasured_GBps and remeasured_latency_us, apart from the tournament's; a pair the tournament
// did not measure (a sampled schedule) is added with those figures alone.
void add_remeasurements(std::vector<LinkSample>& pairs, const std::vector<std::string>& hosts,
                        const std::vector<double>& all, const std::optional<std::string>& nic,
                        std::optional<int> rail) {
  std::vector<LinkSample> again;
  add_measurements(again, hosts, all, nic, rail);
  for (const auto& a : again) {
    auto it = std::find_if(pairs.begin(), pairs.end(), [&](const LinkSample& p) {
      return p.src_rank == a.src_rank && p.dst_rank == a.dst_rank;
    });
    if (it == pairs.end()) {
      LinkSample fresh = a;
      fresh.bandwidth_GBps.reset();
      fresh.latency_us.reset();
      pairs.push_back(fresh);
      it = pairs.end() - 1;
    }
    if (a.bandwidth_GBps) it->remeasured_GBps.push_back(*a.bandwidth_GBps);
    if (a.latency_us) it->remeasured_latency_us.push_back(*a.latency_us);
  }
  std::sort(pairs.begin(), pairs.end(), [](const LinkSample& x, const LinkSample& y) {
    return std::tie(x.src_rank, x.dst_rank) < std::tie(y.src_rank, y.dst_rank);
  });
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
  if (!(o.sample_time >= 0.001 && o.sample_time <= 60))
    usage_error("invalid --sample-time {}: expected 0.001 to 60 seconds", o.sample_time);
}

namespace {

// One pass: what one transport (the control channel, or one NIC) measured, with the pass's NIC
// and rail.
struct Pass {
  std::unique_ptr<PairTransport> link;
  std::optional<std::string> nic;
  std::optional<int> rail;
  std::vector<double> mine;  // src, dst, GB/s, us (-1: not measured there) per direction sent
};

// The tournament over every pass, round by round and within a round pass by pass, so that every
// rail is measured over the same stretch of time (what else loads the fabric or the hosts then
// falls on all rails alike, and cannot pass for one slow rail).
void run_tournament(Control& control, std::vector<Pass>& passes,
                    const std::vector<LinkRound>& rounds, const LinksOptions& o,
                    const LinksResult& r) {
  for (const auto& round : rounds) {
    std::vector<std::pair<int, int>> ranks;
    for (const auto& pair : round)
      ranks.emplace_back(r.participants[static_cast<std::size_t>(pair.a)],
                         r.participants[static_cast<std::size_t>(pair.b)]);
    for (auto& pass : passes)
      measure_round(control, *pass.link, control.rank(), ranks, limits_of(o), pass.mine);
  }
}

// The pass's tournament figures and its confirmation passes; appends its pairs to r.pairs.
void confirm_pass(Control& control, Pass& pass, const LinksOptions& o, LinksResult& r) {
  const int rank = control.rank();
  PairTransport& link = *pass.link;
  const auto& nic = pass.nic;
  const auto rail = pass.rail;
  std::vector<LinkSample> pairs;
  std::vector<double>& mine = pass.mine;
  add_measurements(pairs, r.hosts, gather_all(control, mine), nic, rail);
  // Confirmation: each suspect of the tournament's verdict is measured again, later, against
  // other peers (a host) or itself (a link), beside healthy pairs measured the same way, one
  // pair at a time, in kConfirmPasses passes (the second in the reverse order). A rank
  // descheduled by other work on a shared machine makes one measurement slow, a slow link stays
  // slow in every one; the verdict names a suspect only when its figures measured again stay
  // below the healthy links' (links_verdict). Every sample stays time-bounded, so a pass takes
  // at most kMostConfirmPairs x 3 phases x the phase bound. Rank 0's list is the one every rank
  // follows.
  std::vector<int> again;
  for (const auto& [a, b] : confirmation_pairs(links_verdict(pairs, o.min_fraction), r.participants,
                                               r.hosts, 3, 3, kMostConfirmPairs))
    again.insert(again.end(), {a, b});
  again = from_rank_0(control, again);
  const int count = static_cast<int>(again.size()) / 2;
  for (int pass = 0; pass < kConfirmPasses && count > 0; ++pass) {
    mine.clear();
    for (int i = 0; i < count; ++i) {
      const int k = pass % 2 ? count - 1 - i : i;
      measure_round(
          control, link, rank,
          {{again[static_cast<std::size_t>(2 * k)], again[static_cast<std::size_t>(2 * k + 1)]}},
          limits_of(o, kConfirmSampleFactor), mine);
    }
    add_remeasurements(pairs, r.hosts, gather_all(control, mine), nic, rail);
    r.confirmations += count;
  }
  r.pairs.insert(r.pairs.end(), pairs.begin(), pairs.end());
}

// The NICs (HCAs for NCCL) of each per-NIC pass, the same on every rank: each participant's list
// travels to all. NICs some host lacks go to r.off_the_rails.
std::vector<std::string> rails_of(Control& control, LinksResult& r, const LinksOptions& o,
                                  bool participant) {
  const bool hcas = o.transport == LinksTransport::Nccl;
  std::string mine;
  if (participant) {
    Sysfs sys;
    for (const auto& nic : hcas ? active_hcas(sys) : nics_with_address()) mine += nic + "\n";
  }
  const std::vector<std::string> all = control.allgather(mine);
  std::vector<std::vector<std::string>> per_host;
  std::vector<std::string> hosts;
  for (int p : r.participants) {
    per_host.emplace_back();
    std::string text = all[static_cast<std::size_t>(p)];
    for (std::size_t at = 0, end; (end = text.find('\n', at)) != std::string::npos; at = end + 1)
      per_host.back().push_back(text.substr(at, end - at));
    hosts.push_back(r.hosts[static_cast<std::size_t>(p)]);
  }
  const std::vector<std::string> rails = choose_rails(
      per_host, hosts, o.nics, hcas ? RailKind{"HCA", "with an active port"} : RailKind{});
  if (o.nics.empty()) r.off_the_rails = nics_off_the_rails(per_host, hosts, rails);
  return rails;
}

// NCCL reads NCCL_IB_HCA once per process (see probes/links_nccl.cpp), so one process measures
// one HCA: more is a usage error pointing at --launch. The pass's environment is set here,
// before NCCL starts in this process.
void pin_nccl_to(const std::vector<std::string>& rails) {
  if (rails.size() != 1) {
    std::string list;
    for (const auto& h : rails) list += (list.empty() ? "" : ",") + h;
    usage_error(
        "--transport nccl measures one HCA per process (NCCL reads NCCL_IB_HCA once per "
        "process) and {} are to be measured ({}): run commbench probe links --transport "
        "nccl --launch 'mpirun ...' outside the launcher (a fresh job per HCA), or give "
        "--nics with one HCA",
        rails.size(), list);
  }
  for (const auto& [name, value] : pass_environment(LinksTransport::Nccl, rails.front()))
    ::setenv(name.c_str(), value.c_str(), 1);
}

// This rank's index among the ranks on its host (which GPU it drives).
int local_rank_of(const LinksResult& r, int rank) {
  const auto& hosts = r.hosts;
  return static_cast<int>(std::count(hosts.begin(), hosts.begin() + rank, hosts[rank]));
}

}  // namespace

double links_time_bound(const LinksOptions& o, int rounds, int rails, int confirmations) {
  constexpr int kPhases = 3;  // a -> b, b -> a, latency
  return std::max(1, rails) * rounds * kPhases * phase_bound_seconds(limits_of(o)) +
         confirmations * kPhases * phase_bound_seconds(limits_of(o, kConfirmSampleFactor));
}

LinksResult measure_links(const LinksOptions& asked, Control& control) {
  LinksOptions o = asked;
  const bool per_nic = o.per_nic || !o.nics.empty() || o.transport != LinksTransport::Control;
  if (per_nic && o.transport == LinksTransport::Control) o.transport = LinksTransport::Tcp;
  const int rank = control.rank();
  const int n = control.size();
  check_links_ranks(n);
  LinksResult r;
  r.nranks = n;
  r.options = o;
  r.hosts = control.allgather(host_name());

  // Who takes part: every rank, or the first rank on each host (always, per NIC: a NIC belongs
  // to a host).
  std::map<std::string, int> per_host_count;
  for (const auto& h : r.hosts) ++per_host_count[h];
  const bool shared = std::any_of(per_host_count.begin(), per_host_count.end(),
                                  [](const auto& e) { return e.second > 1; });
  r.per_host = per_nic || o.per_host == PerHost::Yes ||
               (o.per_host == PerHost::Auto && shared && per_host_count.size() > 1);
  for (int i = 0; i < n; ++i) {
    const auto& h = r.hosts[static_cast<std::size_t>(i)];
    if (!r.per_host || std::find(r.hosts.begin(), r.hosts.end(), h) - r.hosts.begin() == i)
      r.participants.push_back(i);
  }
  const int p = static_cast<int>(r.participants.size());
  if (p < 2) {
    usage_error("probe links {} needs ranks on at least 2 hosts (all {} are on {})",
                per_nic ? "per NIC" : "--per-host", n, r.hosts.front());
  }
  const bool participant =
      std::find(r.participants.begin(), r.participants.end(), rank) != r.participants.end();
  if (per_nic) r.rails = rails_of(control, r, o, participant);
  if (o.transport == LinksTransport::Nccl) pin_nccl_to(r.rails);
  // The same schedule on every rank: rank 0 picks the sampling seed.
  std::uint64_t seed =
      rank == 0 ? static_cast<std::uint64_t>(Clock::now().time_since_epoch().count()) : 0;
  control.sum(&seed, 1);
  const std::vector<LinkRound> rounds =
      o.sample > 0 ? sampled_rounds(p, o.sample, seed) : tournament_rounds(p);
  r.rounds = static_cast<int>(rounds.size());

  control.quiet_barrier();
  const auto t0 = Clock::now();
  std::vector<Pass> passes;
  if (!per_nic) passes.push_back({control_transport(control), std::nullopt, std::nullopt, {}});
  if (o.transport == LinksTransport::Nccl)
    passes.push_back({nccl_transport(control, local_rank_of(r, rank)), r.rails.front(), 0, {}});
  for (std::size_t k = 0; o.transport != LinksTransport::Nccl && k < r.rails.size(); ++k) {
    const std::string& nic = r.rails[k];
    passes.push_back(
        {tcp_transport(control, nic, participant ? nic_address(nic) : std::string(), participant),
         nic,
         static_cast<int>(k),
         {}});
  }
  run_tournament(control, passes, rounds, o, r);
  for (auto& pass : passes) confirm_pass(control, pass, o, r);
  std::sort(r.pairs.begin(), r.pairs.end(), [](const LinkSample& x, const LinkSample& y) {
    return std::tie(x.rail, x.src_rank, x.dst_rank) < std::tie(y.rail, y.src_rank, y.dst_rank);
  });
  r.verdict = rails_verdict(r.pairs, o.min_fraction);
  control.quiet_barrier();
  r.seconds = seconds_since(t0);
  return r;
}

namespace {

nlohmann::json opt(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json opt_text(const std::optional<std::string>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json opt_int(const std::optional<int>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

double time_bound(const LinksResult& r) {
  return links_time_bound(r.options, r.rounds, static_cast<int>(r.rails.size()), r.confirmations);
}

nlohmann::json links_to_json(const LinksResult& r) {
  nlohmann::json pairs = nlohmann::json::array(), hosts = nlohmann::json::array(),
                 stragglers = nlohmann::json::array();
  for (const auto& p : r.pairs) {
    pairs.push_back({{"src_rank", p.src_rank},
                     {"dst_rank", p.dst_rank},
                     {"src_host", p.src_host},
                     {"dst_host", p.dst_host},
                     {"bandwidth_GBps", opt(p.bandwidth_GBps)},
                     {"latency_us", opt(p.latency_us)},
                     {"nic", opt_text(p.nic)},
                     {"rail", opt_int(p.rail)},
                     {"remeasured_GBps", p.remeasured_GBps},
                     {"remeasured_latency_us", p.remeasured_latency_us}});
  }
  for (const auto& h : r.verdict.hosts) {
    hosts.push_back({{"host", h.host},
                     {"nic", opt_text(h.nic)},
                     {"median_GBps", opt(h.median_GBps)},
                     {"min_GBps", opt(h.min_GBps)},
                     {"median_latency_us", opt(h.median_latency_us)}});
  }
  auto straggler_json = [](const Straggler& s) {
    return nlohmann::json{
        {"host", s.host.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.host)},
        {"peer", s.peer ? nlohmann::json(*s.peer) : nlohmann::json(nullptr)},
        {"metric", s.metric},
        {"value", s.value},
        {"median", s.median},
        {"fraction", s.fraction},
        {"component", s.component},
        {"nic", opt_text(s.nic)},
        {"rail", opt_int(s.rail)},
        {"remeasured", opt(s.remeasured)},
        {"remeasured_median", opt(s.remeasured_median)},
        {"remeasured_fraction", opt(s.remeasured_fraction)},
        {"noise_floor", opt(s.noise_floor)}};
  };
  nlohmann::json unconfirmed = nlohmann::json::array();
  for (const auto& s : r.verdict.stragglers) stragglers.push_back(straggler_json(s));
  for (const auto& s : r.verdict.unconfirmed) unconfirmed.push_back(straggler_json(s));
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
                         {"min_fraction", r.options.min_fraction},
                         {"sample_time", r.options.sample_time},
                         {"time_bound_seconds", time_bound(r)},
                         {"transport", transport_name(r.options.transport)},
                         {"fresh_processes", r.fresh_processes},
                         {"rails", r.rails},
                         {"off_the_rails", r.off_the_rails}};
  return {{"schema", kLinksSchema},   {"meta", meta},
          {"pairs", pairs},           {"hosts", hosts},
          {"stragglers", stragglers}, {"unconfirmed", unconfirmed}};
}

void print_links(const LinksResult& r, std::ostream& out) {
  const auto& v = r.verdict;
  out << fmt::format(
      "Stragglers (below {:g} of the median bandwidth, or above 1/{:g} of the "
      "median latency):\n",
      r.options.min_fraction, r.options.min_fraction);
  if (v.stragglers.empty()) out << "  none\n";
  for (const auto& s : v.stragglers) out << "  " << describe_straggler(s) << "\n";
  if (!v.unconfirmed.empty()) {
    out << "\nUnconfirmed (slow in the tournament, not beyond the healthy links' noise when "
           "measured again; not stragglers):\n";
    for (const auto& s : v.unconfirmed) out << "  " << describe_unconfirmed(s) << "\n";
  }

  out << fmt::format(
      "\nHosts (over their links to other hosts; 1 GB = 1e9 bytes), {} {}, {}{} round{} and {} "
      "pair{} measured again, {:.1f} s (at most {:.1f} s however slow the links)\n",
      r.participants.size(), r.per_host ? "hosts (one rank each)" : "ranks",
      r.rails.empty() ? std::string()
                      : fmt::format("{} NIC{} x ", r.rails.size(), r.rails.size() == 1 ? "" : "s"),
      r.rounds, r.rounds == 1 ? "" : "s", r.confirmations, r.confirmations == 1 ? "" : "s",
      r.seconds, time_bound(r));
  const bool rails = !r.rails.empty();
  if (!r.off_the_rails.empty()) {
    std::string list;
    for (const auto& x : r.off_the_rails) list += (list.empty() ? "" : ", ") + x;
    out << fmt::format("  not on every host, so not measured: {}\n", list);
  }
  if (r.fresh_processes)
    out << fmt::format("  each of the {} passes ran as a fresh job (its own rank processes)\n",
                       r.rails.size());
  TextTable h;
  if (rails) {
    h.set_header({"host", "NIC", "median GB/s", "min GB/s", "median latency us"});
  } else {
    h.set_header({"host", "median GB/s", "min GB/s", "median latency us"});
  }
  auto num = [](const std::optional<double>& x, const char* spec) {
    return x ? fmt::format(fmt::runtime(spec), *x) : std::string("N/A");
  };
  for (const auto& e : v.hosts) {
    std::vector<std::string> row = {e.host, num(e.median_GBps, "{:.3f}"), num(e.min_GBps, "{:.3f}"),
                                    num(e.median_latency_us, "{:.2f}")};
    if (rails) row.insert(row.begin() + 1, e.nic.value_or(""));
    h.add_row(row);
  }
  if (!h.empty()) h.print(out, "  ");

  out << fmt::format(
      "\nRank pairs ({} samples of {} x {} messages or {:g} s, whichever ends first: bytes "
      "acknowledged / time, the best; latency: half an 8-byte round trip, median of up to {} "
      "round trips{})\n",
      r.options.repeats, r.options.window, format_size(r.options.bytes), r.options.sample_time,
      r.options.repeats * r.options.latency_iters,
      !rails                                        ? ""
      : r.options.transport == LinksTransport::Nccl ? "; NCCL send/recv, NCCL_IB_HCA one HCA"
                                                    : "; TCP from each NIC's address");
  TextTable t;
  std::vector<std::string> header = {"src", "dst", "src host", "dst host", "GB/s", "latency us"};
  if (rails) header.insert(header.begin() + 4, "NIC");
  t.set_header(header);
  for (const auto& p : r.pairs) {
    std::vector<std::string> row = {
        std::to_string(p.src_rank),      std::to_string(p.dst_rank), p.src_host, p.dst_host,
        num(p.bandwidth_GBps, "{:.3f}"), num(p.latency_us, "{:.2f}")};
    if (rails) row.insert(row.begin() + 4, p.nic.value_or(""));
    t.add_row(row);
  }
  t.print(out, "  ");
}

}  // namespace cb
