// An alltoallv's traffic: the elements every rank sends every other, as the split distributions
// make them for a size, the figures that say how uneven it is (incast, send skew), and one rank's
// view of it as counts and displacements. Every rank computes the same matrix from the same
// split, size and seed; the blocks are packed in rank order in both buffers (as nccl-tests,
// Gloo's alltoallv and MPI with prefix-sum displacements lay them out).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "collectives/catalogue/catalogue.hpp"
#include "collectives/catalogue/split.hpp"

namespace cb {

struct Traffic {
  int nranks = 0;
  std::vector<std::uint64_t> counts;  // elements rank i sends rank j, at [i * nranks + j]
  std::optional<double> drop_share;   // moe: the share of token copies over capacity, dropped
  std::uint64_t at(int from, int to) const {
    return counts[static_cast<std::size_t>(from) * static_cast<std::size_t>(nranks) +
                  static_cast<std::size_t>(to)];
  }
};

// The matrix of `s` on `nranks` ranks for the size axis `elements` (the mean a rank is asked to
// send, in elements of `element_size` bytes):
//   uniform   every block floor(elements / n), alltoall's block
//   distance  nccl-tests' bytes(i->j) = (1-S) T/n + S d T / sum(d), d = (j-i) mod n, with T the
//             per-rank bytes after its rounding (per-peer count to 16 bytes), each block rounded
//             down to 16 bytes
//   zipf      each row apportions `elements` over receivers by 1/(j+1)^A (largest remainder)
//   moe       t = floor(elements / (K x hidden)) tokens per rank routed by the seed's scores; one
//             copy of hidden elements per (token, expert) kept, none for a dropped one
//   matrix    the file's bytes per pair, rounded down to whole elements
// A matrix of the wrong size for `nranks` is the caller's to refuse first (split_unfit).
Traffic split_traffic(const SplitSpec& s, int nranks, std::uint64_t elements,
                      std::size_t element_size);

// The uniform split of the same total, the reference of the imbalance tax: every block
// floor(total / n^2), and the remainder one element each along the diagonals j = (i + L) mod n in
// turn (L = 0, 1, ...), so that no rank sends or receives more than ceil(total / n) (nor so more
// than `t`'s busiest rank). With `symmetric`, where that remainder would break the symmetry an
// in-place MPI call needs, it is left out (up to n^2 - 1 elements).
Traffic uniform_like(const Traffic& t, bool symmetric = false);

// Largest-remainder apportionment: `total` split in proportion to `weights` (not all zero), the
// leftover units to the largest fractional parts, ties to the lower index.
std::vector<std::uint64_t> apportion(const std::vector<double>& weights, std::uint64_t total);

struct TrafficFigures {
  std::uint64_t total = 0;     // elements over every pair
  std::uint64_t max_send = 0;  // the most elements one rank sends
  std::uint64_t max_recv = 0;  // the most elements one rank receives
  double incast = 0;           // max_recv / (total / n): 1 when every rank receives the same
  double send_skew = 0;        // max_send / (total / n)
  std::optional<double> drop_share;
  bool symmetric = true;  // every pair sends each other the same (in place needs it for MPI)
  std::uint64_t largest() const { return max_send > max_recv ? max_send : max_recv; }
};
TrafficFigures traffic_figures(const Traffic& t);

// One rank's blocks, in elements: what it sends each peer and where in its send buffer, what it
// receives from each and where in its receive buffer, and where the block it receives from
// each peer starts in that peer's send buffer (validation reads the peer's input from there).
struct RankBlocks {
  std::vector<std::uint64_t> send_counts, send_displs;
  std::vector<std::uint64_t> recv_counts, recv_displs;
  std::vector<std::uint64_t> src_offsets;
  std::uint64_t send_total = 0, recv_total = 0;
};
RankBlocks rank_blocks(const Traffic& t, int rank);

// The blocks of the ranks one process drives, passed with each alltoallv call. `id` differs
// between any two sets a process makes, so a backend may keep what it derives from them (MPI's
// int arrays, Gloo's prepared call, NCCL's send/receive plan) until it changes.
struct VBlocks {
  std::uint64_t id = 0;
  bool symmetric = true;
  std::vector<RankBlocks> local;  // [l]: local rank l (several GPUs per process)
};
std::uint64_t next_vblocks_id();

// The expected layout of a rank's received blocks: one segment per peer that sends it anything,
// holding that peer's input from its block's offset on.
std::vector<Segment> expected_segments(const RankBlocks& b);

// A 64-bit FNV-1a hash of the matrix, for ranks to check they computed the same one.
std::uint64_t traffic_checksum(const Traffic& t);

}  // namespace cb
