#include "probes/links.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <ostream>

#include "collectives/launch.hpp"
#include "collectives/mpi/mpi_runtime.hpp"
#include "common/error.hpp"
#include "common/host_name.hpp"
#include "common/schema.hpp"
#include "common/text_table.hpp"
#include "common/units.hpp"
#include "probes/topology.hpp"

namespace cb {

namespace {

constexpr int kDataTag = 701, kAckTag = 702, kPingTag = 703;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// One round: `window` messages from `src` to `dst`, then a one-byte acknowledgement; the
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

// `iters` 8-byte round trips between a and b; returns one-way microseconds at `a`.
double pingpong(MPI_Comm comm, int me, int a, int b, int iters) {
  char msg[8] = {};
  double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) {
    if (me == a) {
      mpi::check(MPI_Send(msg, 8, MPI_BYTE, b, kPingTag, comm), "MPI_Send");
      mpi::check(MPI_Recv(msg, 8, MPI_BYTE, b, kPingTag, comm, MPI_STATUS_IGNORE), "MPI_Recv");
    } else {
      mpi::check(MPI_Recv(msg, 8, MPI_BYTE, a, kPingTag, comm, MPI_STATUS_IGNORE), "MPI_Recv");
      mpi::check(MPI_Send(msg, 8, MPI_BYTE, a, kPingTag, comm), "MPI_Send");
    }
  }
  return (MPI_Wtime() - t0) / (2.0 * iters) * 1e6;
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
  // Host names, for the table's rank legend.
  std::string me = host_name();
  char name[256] = {};
  std::snprintf(name, sizeof name, "%s", me.c_str());
  std::vector<char> names(static_cast<std::size_t>(n) * sizeof name);
  mpi::check(MPI_Gather(name, sizeof name, MPI_CHAR, names.data(), sizeof name, MPI_CHAR, 0, comm),
             "MPI_Gather");
  for (int i = 0; i < n; ++i)
    r.hosts.emplace_back(names.data() + static_cast<std::size_t>(i) * sizeof name);

  std::vector<char> buf(o.bytes, 1);
  const double none = std::nan("");
  std::vector<double> my_bw(static_cast<std::size_t>(n), none),
      my_lat(static_cast<std::size_t>(n), none);
  for (int src = 0; src < n; ++src) {
    for (int dst = 0; dst < n; ++dst) {
      if (src == dst) continue;
      mpi::check(MPI_Barrier(comm), "MPI_Barrier");
      if (rank != src && rank != dst) continue;
      bandwidth_round(comm, rank, src, dst, buf, o);  // warm-up: connection set-up, registration
      std::vector<double> seconds;
      for (int k = 0; k < o.repeats; ++k)
        seconds.push_back(bandwidth_round(comm, rank, src, dst, buf, o));
      if (rank == src) {
        my_bw[static_cast<std::size_t>(dst)] =
            static_cast<double>(o.bytes) * o.window / median(seconds) / 1e9;
      }
      if (src < dst) {
        pingpong(comm, rank, src, dst, std::max(1, o.latency_iters / 10));
        std::vector<double> us;
        for (int k = 0; k < o.repeats; ++k)
          us.push_back(pingpong(comm, rank, src, dst, o.latency_iters));
        if (rank == src) my_lat[static_cast<std::size_t>(dst)] = median(us);
      }
    }
  }
  mpi::check(MPI_Barrier(comm), "MPI_Barrier");
  std::vector<double> all_bw(static_cast<std::size_t>(n * n)),
      all_lat(static_cast<std::size_t>(n * n));
  mpi::check(MPI_Gather(my_bw.data(), n, MPI_DOUBLE, all_bw.data(), n, MPI_DOUBLE, 0, comm),
             "MPI_Gather");
  mpi::check(MPI_Gather(my_lat.data(), n, MPI_DOUBLE, all_lat.data(), n, MPI_DOUBLE, 0, comm),
             "MPI_Gather");
  MPI_Comm_free(&comm);
  auto at = [&](const std::vector<double>& v, int i, int j) -> std::optional<double> {
    double x = v[static_cast<std::size_t>(i * n + j)];
    return std::isnan(x) ? std::nullopt : std::optional<double>(x);
  };
  r.bandwidth_GBps.assign(static_cast<std::size_t>(n),
                          std::vector<std::optional<double>>(static_cast<std::size_t>(n)));
  r.latency_us = r.bandwidth_GBps;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      r.bandwidth_GBps[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] = at(all_bw, i, j);
      r.latency_us[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] =
          i < j   ? at(all_lat, i, j)
          : j < i ? at(all_lat, j, i)
                  : std::nullopt;
    }
  }
  return r;
}

nlohmann::json links_to_json(const LinksResult& r) {
  auto matrix = [](const std::vector<std::vector<std::optional<double>>>& m) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& row : m) {
      nlohmann::json jr = nlohmann::json::array();
      for (const auto& v : row) jr.push_back(v ? nlohmann::json(*v) : nlohmann::json(nullptr));
      out.push_back(jr);
    }
    return out;
  };
  return {{"schema", kLinksSchema},
          {"nranks", r.nranks},
          {"hosts", r.hosts},
          {"bytes", r.options.bytes},
          {"window", r.options.window},
          {"repeats", r.options.repeats},
          {"latency_iters", r.options.latency_iters},
          {"bandwidth_GBps", matrix(r.bandwidth_GBps)},
          {"latency_us", matrix(r.latency_us)}};
}

void print_links(const LinksResult& r, std::ostream& out) {
  auto table = [&](const std::vector<std::vector<std::optional<double>>>& m, const char* corner,
                   const char* spec) {
    TextTable t;
    std::vector<std::string> header{corner};
    for (int j = 0; j < r.nranks; ++j) header.push_back(std::to_string(j));
    t.set_header(header);
    for (int i = 0; i < r.nranks; ++i) {
      std::vector<std::string> row{std::to_string(i)};
      for (int j = 0; j < r.nranks; ++j) {
        const auto& v = m[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
        row.push_back(i == j ? "-" : v ? fmt::format(fmt::runtime(spec), *v) : "N/A");
      }
      t.add_row(row);
    }
    t.print(out, "  ");
  };
  out << fmt::format(
      "Rank-pair bandwidth, GB/s (1 GB = 1e9 bytes; row: sender, column: receiver), {} messages, "
      "window {}, median "
      "of {}\n",
      format_size(r.options.bytes), r.options.window, r.options.repeats);
  table(r.bandwidth_GBps, "send \\ recv", "{:.2f}");
  out << fmt::format(
      "\nLatency, us (one way, half an 8-byte round trip, mean of {} round trips, median of {})\n",
      r.options.latency_iters, r.options.repeats);
  table(r.latency_us, "rank", "{:.2f}");
  out << "\nRanks:";
  for (int i = 0; i < r.nranks; ++i)
    out << fmt::format(" {}={}", i, r.hosts[static_cast<std::size_t>(i)]);
  out << "\n";
}

}  // namespace cb
