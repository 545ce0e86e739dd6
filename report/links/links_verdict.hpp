// The straggler verdict of `probe links` (and of `check`'s links_* keys): which host, or which
// single link, is slower than the rest, from the measured rank pairs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/schema.hpp"
#include "report/launch_statistics.hpp"  // median_of

namespace cb {

// One measured ordered rank pair.
struct LinkSample {
  int src_rank = 0;
  int dst_rank = 0;
  std::string src_host;
  std::string dst_host;
  std::optional<double> bandwidth_GBps;
  std::optional<double> latency_us;
  std::optional<std::string> nic;  // the netdev both ends used (per-NIC passes), else empty
  std::optional<int> rail;         // the pass's index, 0-based, with `nic`
  // Each measurement again after the tournament (the confirmation passes: suspects and the
  // healthy links they are held against), in order; empty where not measured again.
  std::vector<double> remeasured_GBps;
  std::vector<double> remeasured_latency_us;
};

// An ordered pair of different hosts: the median over the rank pairs between them.
struct HostLink {
  std::string src;
  std::string dst;
  std::optional<double> bandwidth_GBps;
  std::optional<double> latency_us;
  std::optional<std::string> nic;  // per-NIC passes: the rail's netdev
  // Measured again: the median over its rank pairs of each one's best, and of each one's mean.
  std::optional<double> remeasured_GBps;
  std::optional<double> remeasured_latency_us;
  std::optional<double> remeasured_typical_GBps;
  std::optional<double> remeasured_typical_latency_us;
};

struct HostLinkSummary {
  std::string host;
  std::optional<std::string> nic;     // per-NIC passes: one summary per host and rail
  std::optional<double> median_GBps;  // over the links from and to this host
  std::optional<double> min_GBps;
  std::optional<double> median_latency_us;
};

struct Straggler {
  std::string host;                 // empty for a whole rail
  std::optional<std::string> peer;  // empty when the whole host is slow
  std::string metric;               // "bandwidth" or "latency"
  double value = 0;                 // the host's median over its links, or the link's figure
  double median = 0;                // the reference it is compared with
  double fraction = 0;              // value / median (bandwidth), median / value (latency)
  // What is named: "host", "link" (host -> peer), and with per-NIC passes "nic" (one rail of
  // one host), "rail" (one rail on many hosts: its switch) or "host" (every rail of the host).
  std::string component = "host";
  std::optional<std::string> nic;
  std::optional<int> rail;
  int slow_rails = 0;  // a host named on every rail: how many (0 otherwise)
  // The confirmation (docs/probe.md): the suspect measured again, its best (a host: the median
  // of its links' best against other peers; a link: its own), against the median of the healthy
  // links' best measured beside it, and the lowest of those healthy links (the mean of its
  // measurements) over that median
  // (the noise between healthy links). Empty where the pairs were not measured again.
  std::optional<double> remeasured;
  std::optional<double> remeasured_median;
  std::optional<double> remeasured_fraction;
  std::optional<double> noise_floor;
};

struct LinksVerdict {
  std::vector<HostLink> links;
  std::vector<HostLinkSummary> hosts;  // in order of first appearance
  std::vector<Straggler> stragglers;   // whole hosts first, then single links
  // Slow in the tournament but not when measured again beyond the healthy links' noise: not
  // stragglers, kept with their figures.
  std::vector<Straggler> unconfirmed;
};

// Pairs within one host are left out. For each metric, a host is a suspect when more than half
// of its links fall below `min_fraction` of the median of the links that do not touch it (all
// links where every link touches it, as with 2 hosts); a single link is one when it falls below
// `min_fraction` of the median of the links of hosts not named. Where pairs were measured again
// (any pair has a remeasured figure), a suspect is a straggler only when even its best measured
// again is slow: a host when more than half of its links, a link when it, falls below the
// smaller of `min_fraction` and the square of the noise floor (the lowest healthy link measured
// again, the mean of its measurements, over the healthy links' median best) times that median;
// otherwise it is unconfirmed. Without any pair measured again (documents of older probes), the
// suspects are the stragglers.
LinksVerdict links_verdict(const std::vector<LinkSample>& pairs, double min_fraction);

// The rank pairs that `probe links` measures again after its tournament, so that each suspect
// is held against healthy links measured the same way: every pair of hosts where they are no
// more than `most`; otherwise each suspect host against up to `peers` healthy hosts, each suspect
// link itself, then up to `references` pairs of healthy hosts (none of them a suspect link), at
// most `most` pairs in all. Rank pairs (a < b), the first participant rank of each host. Empty
// when there is no suspect and more than `most` pairs.
std::vector<std::pair<int, int>> confirmation_pairs(const LinksVerdict& suspects,
                                                    const std::vector<int>& participants,
                                                    const std::vector<std::string>& rank_hosts,
                                                    int peers = 3, int references = 3,
                                                    int most = 8);

// Pairs from per-NIC passes (each with `nic` and `rail`): links_verdict per rail, then which
// component is slow. A rail is named when its median link is below `min_fraction` of the median
// of the other rails' medians, or when more than half of its hosts are named on it (a switch); a
// host named on every rail (2 rails or more) is named once, as the host; a host named on some
// rails only is named per rail, as that host's NIC. Single links keep their rail. Pairs without a
// NIC go to links_verdict.
LinksVerdict rails_verdict(const std::vector<LinkSample>& pairs, double min_fraction);

// True when the pairs come from per-NIC passes.
bool has_rails(const std::vector<LinkSample>& pairs);

// The component a straggler names, short: "h2", "h2 -> h3", "h2 NIC eth1 (rail 1)",
// "rail 1 (eth1)".
std::string straggler_name(const Straggler& s);
// One line with the evidence: "host h2 NIC eth1 (rail 1): bandwidth 0.061 GB/s is 0.05 of the
// rail's median 1.2 GB/s", and where it was measured again, those figures.
std::string describe_straggler(const Straggler& s);
// The line for an unconfirmed suspect: "unconfirmed: host h3: bandwidth ... measured again ...".
std::string describe_unconfirmed(const Straggler& s);

}  // namespace cb
