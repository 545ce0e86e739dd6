// The collective catalogue: each collective described once, as data. The runner, the patterns
// and every backend read these facts instead of keeping their own per-collective copies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace cb {

enum class Collective {
  AllReduce,
  AllGather,
  ReduceScatter,
  Broadcast,
  Reduce,
  AllToAll,
  Gather,
  Scatter,
  SendRecv,
  Barrier,
  AllToAllV
};

// A buffer holds 0, count, or count x nranks elements, or what the split gives it (alltoallv: the
// blocks of collectives/catalogue/traffic.hpp).
enum class Extent { None, One, PerRank, Split };

enum class BusFactor { AllReduce, NMinus1OverN, One, None };

enum class Placement { Out, In };

struct CollectiveInfo {
  Collective id;
  std::string_view name;
  std::vector<std::string_view> aliases;  // nccl-tests spellings and other common names
  bool reduces;                           // takes a reduction operator
  bool rooted;                            // has a root rank
  Extent send;                            // send buffer extent, in units of `count`
  Extent recv;                            // receive buffer extent
  BusFactor bus;
};

const CollectiveInfo& info(Collective c);
const std::vector<CollectiveInfo>& all_collectives();
std::optional<Collective> parse_collective(std::string_view name);
std::string_view name(Collective c);
std::string_view name(Placement p);

// Elements in a buffer of the given extent.
std::uint64_t elements(Extent e, std::uint64_t count, int nranks);

// Per-rank `count` for a requested size, rounded down to whole elements (and, for collectives
// whose buffers hold one block per rank, to whole blocks). 0 means the size is too small.
std::uint64_t count_for_bytes(Collective c, std::uint64_t bytes, std::size_t dtype_size,
                              int nranks);
// The reported size: the larger of one rank's send and receive buffers (nccl-tests convention).
std::uint64_t reported_bytes(Collective c, std::uint64_t count, std::size_t dtype_size, int nranks);
// busbw = algbw x this factor (nccl-tests factors).
double bus_factor(Collective c, int nranks);

// In place, one buffer holds both: elements it needs, where this rank's input starts, and where
// its result starts (NCCL convention; a backend may put a result at the start instead).
std::uint64_t in_place_elements(Collective c, std::uint64_t count, int nranks);
std::uint64_t in_place_input_offset(Collective c, int rank, std::uint64_t count);
std::uint64_t in_place_output_offset(Collective c, int rank, std::uint64_t count);

// Which data a stretch of a rank's result must hold: elements [src_offset, src_offset + length)
// of rank `source`'s input, or of the reduction over all ranks' inputs when `reduced`.
struct Segment {
  std::uint64_t dst_offset;
  std::uint64_t length;
  bool reduced;
  int source;
  std::uint64_t src_offset;
};

// The expected layout of `rank`'s result region; empty where the rank receives nothing (and for
// alltoallv, whose layout comes from its blocks: traffic.hpp).
std::vector<Segment> expected_segments(Collective c, int rank, int nranks, int root,
                                       std::uint64_t count);

}  // namespace cb
