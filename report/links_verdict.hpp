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
};

// An ordered pair of different hosts: the median over the rank pairs between them.
struct HostLink {
  std::string src;
  std::string dst;
  std::optional<double> bandwidth_GBps;
  std::optional<double> latency_us;
};

struct HostLinkSummary {
  std::string host;
  std::optional<double> median_GBps;  // over the links from and to this host
  std::optional<double> min_GBps;
  std::optional<double> median_latency_us;
};

struct Straggler {
  std::string host;
  std::optional<std::string> peer;  // empty when the whole host is slow
  std::string metric;               // "bandwidth" or "latency"
  double value = 0;                 // the host's median over its links, or the link's figure
  double median = 0;                // the reference it is compared with
  double fraction = 0;              // value / median (bandwidth), median / value (latency)
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

}  // namespace cb
