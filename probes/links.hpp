// `probe links`: bandwidth and latency between ranks (or hosts), scheduled as a round-robin
// tournament so that each round measures disjoint pairs at the same time, with a verdict naming
// the host or link that is slower than the rest.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "core/control.hpp"
#include "probes/links_transport.hpp"
#include "report/links/links_verdict.hpp"

namespace cb {

enum class PerHost { Auto, Yes, No };

struct LinksOptions {
  std::uint64_t bytes = 4ULL << 20;  // per message
  int window = 16;                   // messages in flight per round (as osu_bw)
  int repeats = 5;                   // samples per direction; the median is reported
  int latency_iters = 200;           // ping-pong round trips per latency sample
  PerHost per_host = PerHost::Auto;  // Auto: one rank per host when ranks span hosts and a
                                     // host has several
  int sample = 0;                    // > 0: only this many partners per participant
  double min_fraction = 0.8;         // straggler threshold
  double sample_time = 0.05;         // seconds: the most one sample sends for
  bool per_nic = false;              // one tournament per NIC every host has (a rail)
  std::vector<std::string> nics;     // or per NIC of this list
  // Per NIC: TCP from each NIC's address, or NCCL send/recv pinned to one HCA (one per process).
  LinksTransport transport = LinksTransport::Control;
};

struct LinksResult {
  int nranks = 0;
  std::vector<std::string> hosts;  // per rank
  std::vector<int> participants;   // ranks that took part, in schedule order
  bool per_host = false;
  int rounds = 0;
  double seconds = 0;              // wall time of the schedule
  int confirmations = 0;           // rank pairs measured again to confirm stragglers
  std::vector<std::string> rails;  // per-NIC passes: the NIC of each, in order (rail 0, 1, ...)
  std::vector<std::string> off_the_rails;  // "h3 mlx5_8": NICs not on every host, not measured
  bool fresh_processes = false;            // each pass ran as its own job (--launch)
  LinksOptions options;
  std::vector<LinkSample> pairs;  // every ordered pair measured
  LinksVerdict verdict;
};

// Throws a usage Error on values out of range; checked before any rank starts talking.
void check_links_options(const LinksOptions& options);
// The most a full probe can take whatever the links do, in seconds, barriers and the control
// channel's batch overshoot aside: rounds x 3 phases x the phase bound, per rail, plus the
// confirmation passes.
double links_time_bound(const LinksOptions& options, int rounds, int rails, int confirmations);
// Throws a usage Error unless there are at least 2 ranks.
void check_links_ranks(int nranks);
// Collective over every rank of the run's control channel (MPI under mpirun/srun, Gloo over TCP
// for ranks the local launcher started); the result is complete on every rank. Needs at least 2
// ranks.
LinksResult measure_links(const LinksOptions& options, Control& control);

nlohmann::json links_to_json(const LinksResult& r);
void print_links(const LinksResult& r, std::ostream& out);

}  // namespace cb
