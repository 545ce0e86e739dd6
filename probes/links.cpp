#include "probes/links.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>
#include <ostream>
#include <set>

#include "collectives/launch.hpp"
#include "collectives/mpi/mpi_runtime.hpp"
#include "common/error.hpp"
#include "common/host_name.hpp"
#include "common/schema.hpp"
#include "common/text_table.hpp"
#include "common/units.hpp"
#include "probes/links_schedule.hpp"

namespace cb {

namespace {

constexpr int kDataTag = 701, kAckTag = 702, kPingTag = 703;

// One sample: `window` messages from `src` to `dst`, then a one-byte acknowledgement; the
// sender's clock runs from the first send to the acknowledgement. Returns seconds at `src`.
double bandwidth_round(MPI_Comm comm, int me, int src, int dst, std::vector<char>& buf,
                       const LinksOptions& o) {
  std::vector<MPI_Request> reqs(static_cast<std::size_t>(o.window));
  const int count = static_cast<int>(o.bytes);
  char ack = 0;
  if (me == src) {
    double t0 = MPI_Wtime();
    for (int w = 0; w < o.window; ++w) {
      mpi::check(MPI_Isend(buf.data(), count, MPI_BYTE, dst, kDataTag, comm,
                           &reqs[static_cast<std::size_t>(w)]),
                 "MPI_Isend");
    }
    mpi::check(MPI_Waitall(o.window, reqs.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    mpi::check(MPI_Recv(&ack, 1, MPI_BYTE, dst, kAckTag, comm, MPI_STATUS_IGNORE), "MPI_Recv");
    return MPI_Wtime() - t0;
  }
  for (int w = 0; w < o.window; ++w) {
    mpi::check(MPI_Irecv(buf.data(), count, MPI_BYTE, src, kDataTag, comm,
                         &reqs[static_cast<std::size_t>(w)]),
               "MPI_Irecv");
  }
  mpi::check(MPI_Waitall(o.window, reqs.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  mpi::check(MPI_Send(&ack, 1, MPI_BYTE, src, kAckTag, comm), "MPI_Send");
  return 0;
}

// `iters` 8-byte round trips between a and b; appends each one's one-way microseconds at `a`.
void pingpong(MPI_Comm comm, int me, int a, int b, int iters, std::vector<double>& us) {
  char msg[8] = {};
  for (int i = 0; i < iters; ++i) {
    double t0 = MPI_Wtime();
    if (me == a) {
      mpi::check(MPI_Send(msg, 8, MPI_BYTE, b, kPingTag, comm), "MPI_Send");
      mpi::check(MPI_Recv(msg, 8, MPI_BYTE, b, kPingTag, comm, MPI_STATUS_IGNORE), "MPI_Recv");
      us.push_back((MPI_Wtime() - t0) / 2.0 * 1e6);
    } else {
      mpi::check(MPI_Recv(msg, 8, MPI_BYTE, a, kPingTag, comm, MPI_STATUS_IGNORE), "MPI_Recv");
      mpi::check(MPI_Send(msg, 8, MPI_BYTE, a, kPingTag, comm), "MPI_Send");
    }
  }
}

// Best bandwidth (GB/s) of `repeats` samples from `src` to `dst` after one warm-up; meaningful
// at `src`. The best, not the median: on a shared machine a descheduled rank only ever makes a
// link look slower, and a link throttled below a rate never beats it.
double bandwidth(MPI_Comm comm, int me, int src, int dst, std::vector<char>& buf,
                 const LinksOptions& o) {
  bandwidth_round(comm, me, src, dst, buf, o);  // connection set-up, registration
  double best = 1e300;
  for (int k = 0; k < o.repeats; ++k)
    best = std::min(best, bandwidth_round(comm, me, src, dst, buf, o));
  return static_cast<double>(o.bytes) * o.window / best / 1e9;
}

// The median one-way time of repeats x latency_iters round trips after a warm-up (the median
// of single round trips: a stalled one does not move it).
double latency(MPI_Comm comm, int me, int a, int b, const LinksOptions& o) {
  std::vector<double> warm, us;
  pingpong(comm, me, a, b, std::max(1, o.latency_iters / 10), warm);
  pingpong(comm, me, a, b, o.repeats * o.latency_iters, us);
  return me == a ? median_of(us) : 0;
}

// A barrier that sleeps while it waits: ranks with no partner in a round must leave the cores to
// the pairs being measured (a polling MPI_Barrier takes a whole core each).
void quiet_barrier(MPI_Comm comm) {
  MPI_Request req;
  mpi::check(MPI_Ibarrier(comm, &req), "MPI_Ibarrier");
  int done = 0;
  while (true) {
    mpi::check(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return;
    struct timespec pause = {0, 200000};  // 0.2 ms
    nanosleep(&pause, nullptr);
  }
}

std::vector<std::string> gather_hosts(MPI_Comm comm, int n) {
  std::string me = host_name();
  char name[256] = {};
  std::snprintf(name, sizeof name, "%s", me.c_str());
  std::vector<char> names(static_cast<std::size_t>(n) * sizeof name);
  mpi::check(MPI_Allgather(name, sizeof name, MPI_CHAR, names.data(), sizeof name, MPI_CHAR, comm),
             "MPI_Allgather");
  std::vector<std::string> hosts;
  for (int i = 0; i < n; ++i)
    hosts.emplace_back(names.data() + static_cast<std::size_t>(i) * sizeof name);
  return hosts;
}

constexpr int kConfirmPasses = 2;

// Measures each pair (a < b) at the same time: a -> b, then b -> a, then latency, each phase
// started together. Appends what this rank measured as sender to `mine`.
void measure_round(MPI_Comm comm, int rank, const std::vector<std::pair<int, int>>& pairs,
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
  quiet_barrier(comm);
  if (in) ab = bandwidth(comm, rank, a, b, buf, o);
  quiet_barrier(comm);
  if (in) ba = bandwidth(comm, rank, b, a, buf, o);
  quiet_barrier(comm);
  if (in) us = latency(comm, rank, a, b, o);
  if (in && rank == a) mine.insert(mine.end(), {double(a), double(b), ab, us});
  if (in && rank == b) mine.insert(mine.end(), {double(b), double(a), ba, -1});
}

// Every rank's `mine`, concatenated at rank 0 (empty elsewhere).
std::vector<double> gather_at_0(MPI_Comm comm, int n, const std::vector<double>& mine) {
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(n)), displs(static_cast<std::size_t>(n));
  mpi::check(MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm), "MPI_Gather");
  int total = 0;
  for (int i = 0; i < n; ++i) {
    displs[static_cast<std::size_t>(i)] = total;
    total += counts[static_cast<std::size_t>(i)];
  }
  std::vector<double> all(static_cast<std::size_t>(std::max(total, 1)));
  mpi::check(MPI_Gatherv(mine.data(), count, MPI_DOUBLE, all.data(), counts.data(), displs.data(),
                         MPI_DOUBLE, 0, comm),
             "MPI_Gatherv");
  all.resize(static_cast<std::size_t>(total));
  return all;
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

LinksResult measure_links(const LinksOptions& o, int& rank) {
  if (o.bytes == 0 || o.bytes > (1ULL << 30))
    usage_error("invalid --size {}: expected 1 byte to 1 GiB", o.bytes);
  // Checked before MPI starts: a lone process would otherwise become an MPI singleton.
  if (detect_launch().size < 2) {
    usage_error(
        "probe links needs at least 2 ranks: launch it as mpirun -np N commbench probe links");
  }
  mpi::ensure_initialized();
  MPI_Comm comm;
  mpi::check(MPI_Comm_dup(MPI_COMM_WORLD, &comm), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int n = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &n);
  if (n < 2) {
    MPI_Comm_free(&comm);
    usage_error(
        "probe links needs at least 2 ranks: launch it as mpirun -np N commbench probe links");
  }
  LinksResult r;
  r.nranks = n;
  r.options = o;
  r.hosts = gather_hosts(comm, n);

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
    MPI_Comm_free(&comm);
    usage_error("probe links --per-host needs ranks on at least 2 hosts (all {} are on {})", n,
                r.hosts.front());
  }
  // The same schedule on every rank: rank 0 picks the sampling seed.
  std::uint64_t seed = static_cast<std::uint64_t>(MPI_Wtime() * 1e6);
  mpi::check(MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, comm), "MPI_Bcast");
  const std::vector<LinkRound> rounds =
      o.sample > 0 ? sampled_rounds(p, o.sample, seed) : tournament_rounds(p);
  r.rounds = static_cast<int>(rounds.size());

  std::vector<char> buf(o.bytes, 1);
  quiet_barrier(comm);
  const double t0 = MPI_Wtime();
  std::vector<double> mine;  // src, dst, GB/s, us (-1: not measured there) per direction sent
  for (const auto& round : rounds) {
    std::vector<std::pair<int, int>> pairs;
    for (const auto& pair : round)
      pairs.emplace_back(r.participants[static_cast<std::size_t>(pair.a)],
                         r.participants[static_cast<std::size_t>(pair.b)]);
    measure_round(comm, rank, pairs, buf, o, mine);
  }
  std::vector<double> all = gather_at_0(comm, n, mine);
  if (rank == 0) {
    add_measurements(r, all);
    r.verdict = links_verdict(r.pairs, o.min_fraction);
  }
  // Confirmation: the rank pairs behind each straggler are measured again, one pair at a time
  // with three times the samples, up to twice; each figure keeps its best. A rank descheduled by
  // other work on a shared machine only makes one measurement slow, a slow link stays slow.
  for (int pass = 0; pass < kConfirmPasses; ++pass) {
    std::vector<int> again;  // a, b, a, b, ...
    if (rank == 0) again = suspects(r);
    int count = static_cast<int>(again.size());
    mpi::check(MPI_Bcast(&count, 1, MPI_INT, 0, comm), "MPI_Bcast");
    if (count == 0) break;
    again.resize(static_cast<std::size_t>(count));
    mpi::check(MPI_Bcast(again.data(), count, MPI_INT, 0, comm), "MPI_Bcast");
    mine.clear();
    LinksOptions longer = o;  // three times the samples
    longer.repeats = 3 * o.repeats;
    for (int k = 0; k + 1 < count; k += 2)
      measure_round(comm, rank,
                    {{again[static_cast<std::size_t>(k)], again[static_cast<std::size_t>(k + 1)]}},
                    buf, longer, mine);
    all = gather_at_0(comm, n, mine);
    if (rank == 0) {
      add_measurements(r, all);
      r.verdict = links_verdict(r.pairs, o.min_fraction);
      r.confirmations += count / 2;
    }
  }
  quiet_barrier(comm);
  r.seconds = MPI_Wtime() - t0;
  MPI_Comm_free(&comm);
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
