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
};

// An ordered pair of different hosts: the median over the rank pairs between them.
struct HostLink {
  std::string src;
  std::string dst;
  std::optional<double> bandwidth_GBps;
  std::optional<double> latency_us;
  std::optional<std::string> nic;  // per-NIC passes: the rail's netdev
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
};

struct LinksVerdict {
  std::vector<HostLink> links;
  std::vector<HostLinkSummary> hosts;  // in order of first appearance
  std::vector<Straggler> stragglers;   // whole hosts first, then single links
};

// Pairs within one host are left out. For each metric, a host is a straggler when more than half
// of its links fall below `min_fraction` of the median of the links that do not touch it (all
// links where every link touches it, as with 2 hosts); a single link is one when it falls below
// `min_fraction` of the median of the links of hosts not named.
LinksVerdict links_verdict(const std::vector<LinkSample>& pairs, double min_fraction);

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
// rail's median 1.2 GB/s".
std::string describe_straggler(const Straggler& s);

}  // namespace cb
