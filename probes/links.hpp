// `probe links`: bandwidth and latency between every pair of MPI ranks, one pair at a time
// while the others wait, so each figure is that link alone.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace cb {

struct LinksOptions {
  std::uint64_t bytes = 4ULL << 20;  // per message
  int window = 16;                   // messages in flight per round (as osu_bw)
  int repeats = 5;                   // rounds; the median is reported
  int latency_iters = 200;           // ping-pong round trips per latency sample
};

struct LinksResult {
  int nranks = 0;
  std::vector<std::string> hosts;  // per rank
  LinksOptions options;
  std::vector<std::vector<std::optional<double>>> bandwidth_GBps;  // [sender][receiver]
  std::vector<std::vector<std::optional<double>>> latency_us;      // symmetric, one way
};

// Collective over every rank; the result is complete on rank 0 only. Needs at least 2 ranks.
LinksResult measure_links(const LinksOptions& options, int& rank);

nlohmann::json links_to_json(const LinksResult& r);
void print_links(const LinksResult& r, std::ostream& out);

}  // namespace cb
