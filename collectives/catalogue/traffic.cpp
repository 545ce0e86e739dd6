#include "collectives/catalogue/traffic.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <numeric>

#include "collectives/catalogue/moe_router.hpp"

namespace cb {

namespace {

using U = std::uint64_t;

Traffic empty_traffic(int nranks) {
  Traffic t;
  t.nranks = nranks;
  const auto n = static_cast<std::size_t>(nranks);
  t.counts.assign(n * n, 0);
  return t;
}

// nccl-tests' generated pattern (alltoallv.cu): its per-peer count rounded to 16 bytes, then
// each block's bytes rounded down to 16.
Traffic distance_traffic(double spread, int nranks, U elements, std::size_t es) {
  Traffic t = empty_traffic(nranks);
  const U n = static_cast<U>(nranks);
  const U align = es < 16 ? 16 / es : 1;  // elements in 16 bytes: a power of two
  const U per_peer = (elements / n) & ~(align - 1);
  const U total_bytes = per_peer * n * es;
  const U sum_distances = n * (n - 1) / 2;
  for (int i = 0; i < nranks; ++i) {
    for (int j = 0; j < nranks; ++j) {
      U bytes = 0;
      if (nranks == 1) {
        bytes = total_bytes & ~U{15};
      } else {
        const U d = static_cast<U>((j - i + nranks) % nranks);
        const double uniform = static_cast<double>(total_bytes) / static_cast<double>(n);
        const double dist = static_cast<double>(d) * static_cast<double>(total_bytes) /
                            static_cast<double>(sum_distances);
        bytes = static_cast<U>((1.0 - spread) * uniform + spread * dist) & ~U{15};
      }
      t.counts[static_cast<std::size_t>(i) * n + static_cast<std::size_t>(j)] = bytes / es;
    }
  }
  return t;
}

Traffic zipf_traffic(double a, int nranks, U elements) {
  Traffic t = empty_traffic(nranks);
  std::vector<double> w(static_cast<std::size_t>(nranks));
  for (int j = 0; j < nranks; ++j) w[static_cast<std::size_t>(j)] = std::pow(j + 1.0, -a);
  const std::vector<U> row = apportion(w, elements);
  for (int i = 0; i < nranks; ++i) {
    std::copy(row.begin(), row.end(), t.counts.begin() + static_cast<std::ptrdiff_t>(i) * nranks);
  }
  return t;
}

Traffic moe_traffic(const SplitSpec& s, int nranks, U elements) {
  Traffic t = empty_traffic(nranks);
  const U per_token = static_cast<U>(s.moe.topk) * s.moe_hidden;
  const U tokens = per_token ? elements / per_token : 0;
  const MoeRoute route = route_tokens(s.moe, nranks, tokens, s.seed);
  for (std::size_t k = 0; k < t.counts.size(); ++k) t.counts[k] = route.copies[k] * s.moe_hidden;
  t.drop_share = route.routed ? static_cast<double>(route.dropped) / route.routed : 0.0;
  return t;
}

}  // namespace

std::vector<U> apportion(const std::vector<double>& weights, U total) {
  const double sum = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::vector<U> out(weights.size(), 0);
  if (!(sum > 0)) return out;
  std::vector<std::pair<double, std::size_t>> rest;
  U given = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const double exact = static_cast<double>(total) * (weights[i] / sum);
    out[i] = std::min<U>(static_cast<U>(std::floor(exact)), total - given);
    given += out[i];
    rest.emplace_back(exact - static_cast<double>(out[i]), i);
  }
  std::stable_sort(rest.begin(), rest.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t k = 0; given < total; k = (k + 1) % rest.size()) {
    ++out[rest[k].second];
    ++given;
  }
  return out;
}

Traffic split_traffic(const SplitSpec& s, int nranks, U elements, std::size_t element_size) {
  switch (s.kind) {
    case SplitKind::Uniform: {
      Traffic t = empty_traffic(nranks);
      std::fill(t.counts.begin(), t.counts.end(), elements / static_cast<U>(nranks));
      return t;
    }
    case SplitKind::Distance:
      return distance_traffic(s.spread, nranks, elements, element_size);
    case SplitKind::Zipf:
      return zipf_traffic(s.zipf, nranks, elements);
    case SplitKind::Moe:
      return moe_traffic(s, nranks, elements);
    case SplitKind::Matrix: {
      Traffic t = empty_traffic(nranks);
      for (std::size_t k = 0; k < t.counts.size() && k < s.matrix.size(); ++k) {
        t.counts[k] = s.matrix[k] / element_size;
      }
      return t;
    }
  }
  return empty_traffic(nranks);
}

Traffic uniform_like(const Traffic& t, bool symmetric) {
  Traffic u = empty_traffic(t.nranks);
  const U total = std::accumulate(t.counts.begin(), t.counts.end(), U{0});
  const U n = static_cast<U>(t.nranks);
  std::fill(u.counts.begin(), u.counts.end(), total / (n * n));
  Traffic whole = u;
  for (U k = 0; k < total % (n * n); ++k) {
    const U i = k % n, j = (k / n + i) % n;
    ++u.counts[i * n + j];
  }
  if (symmetric && !traffic_figures(u).symmetric) return whole;
  return u;
}

TrafficFigures traffic_figures(const Traffic& t) {
  TrafficFigures f;
  const int n = t.nranks;
  for (int i = 0; i < n; ++i) {
    U send = 0, recv = 0;
    for (int j = 0; j < n; ++j) {
      send += t.at(i, j);
      recv += t.at(j, i);
      f.symmetric = f.symmetric && t.at(i, j) == t.at(j, i);
    }
    f.total += send;
    f.max_send = std::max(f.max_send, send);
    f.max_recv = std::max(f.max_recv, recv);
  }
  if (f.total > 0) {
    const double mean = static_cast<double>(f.total) / n;
    f.incast = static_cast<double>(f.max_recv) / mean;
    f.send_skew = static_cast<double>(f.max_send) / mean;
  }
  f.drop_share = t.drop_share;
  return f;
}

RankBlocks rank_blocks(const Traffic& t, int rank) {
  RankBlocks b;
  const auto n = static_cast<std::size_t>(t.nranks);
  b.send_counts.resize(n);
  b.send_displs.resize(n);
  b.recv_counts.resize(n);
  b.recv_displs.resize(n);
  b.src_offsets.assign(n, 0);
  for (int q = 0; q < t.nranks; ++q) {
    const auto k = static_cast<std::size_t>(q);
    b.send_counts[k] = t.at(rank, q);
    b.send_displs[k] = b.send_total;
    b.send_total += b.send_counts[k];
    b.recv_counts[k] = t.at(q, rank);
    b.recv_displs[k] = b.recv_total;
    b.recv_total += b.recv_counts[k];
    for (int before = 0; before < rank; ++before) b.src_offsets[k] += t.at(q, before);
  }
  return b;
}

std::uint64_t next_vblocks_id() {
  static std::atomic<std::uint64_t> next{1};
  return next++;
}

std::vector<Segment> expected_segments(const RankBlocks& b) {
  std::vector<Segment> out;
  for (std::size_t q = 0; q < b.recv_counts.size(); ++q) {
    if (b.recv_counts[q] == 0) continue;
    out.push_back(
        {b.recv_displs[q], b.recv_counts[q], false, static_cast<int>(q), b.src_offsets[q]});
  }
  return out;
}

std::uint64_t traffic_checksum(const Traffic& t) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  auto add = [&](std::uint64_t v) {
    for (int byte = 0; byte < 8; ++byte) {
      h ^= (v >> (8 * byte)) & 0xff;
      h *= 0x100000001b3ULL;
    }
  };
  add(static_cast<std::uint64_t>(t.nranks));
  for (std::uint64_t c : t.counts) add(c);
  return h;
}

}  // namespace cb
