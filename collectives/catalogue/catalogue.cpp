#include "collectives/catalogue/catalogue.hpp"

#include <algorithm>

namespace cb {

namespace {

using E = Extent;
using B = BusFactor;

// One row per collective, in enum order.
// clang-format off
const std::vector<CollectiveInfo> kCollectives = {
    // id                      name              aliases                                    reduces rooted send         recv         bus
    {Collective::AllReduce,     "allreduce",      {"all_reduce"},                            true,   false, E::One,     E::One,     B::AllReduce},
    {Collective::AllGather,     "allgather",      {"all_gather"},                            false,  false, E::One,     E::PerRank, B::NMinus1OverN},
    {Collective::ReduceScatter, "reduce_scatter", {"reducescatter", "reduce_scatter_block"}, true,   false, E::PerRank, E::One,     B::NMinus1OverN},
    {Collective::Broadcast,     "broadcast",      {"bcast"},                                 false,  true,  E::One,     E::One,     B::One},
    {Collective::Reduce,        "reduce",         {},                                        true,   true,  E::One,     E::One,     B::One},
    {Collective::AllToAll,      "alltoall",       {"all_to_all"},                            false,  false, E::PerRank, E::PerRank, B::NMinus1OverN},
    {Collective::Gather,        "gather",         {},                                        false,  true,  E::One,     E::PerRank, B::NMinus1OverN},
    {Collective::Scatter,       "scatter",        {},                                        false,  true,  E::PerRank, E::One,     B::NMinus1OverN},
    {Collective::SendRecv,      "sendrecv",       {"send_recv"},                             false,  false, E::One,     E::One,     B::One},
    {Collective::Barrier,       "barrier",        {},                                        false,  false, E::None,    E::None,    B::None},
    {Collective::AllToAllV,     "alltoallv",      {"all_to_allv", "alltoall_v"},             false,  false, E::Split,   E::Split,   B::NMinus1OverN},
};
// clang-format on

}  // namespace

const CollectiveInfo& info(Collective c) {
  return kCollectives[static_cast<std::size_t>(c)];
}

const std::vector<CollectiveInfo>& all_collectives() {
  return kCollectives;
}

std::optional<Collective> parse_collective(std::string_view name) {
  for (const auto& c : kCollectives) {
    if (c.name == name) return c.id;
    if (std::find(c.aliases.begin(), c.aliases.end(), name) != c.aliases.end()) return c.id;
  }
  return std::nullopt;
}

std::string_view name(Collective c) {
  return info(c).name;
}

std::string_view name(Placement p) {
  return p == Placement::Out ? "out" : "in";
}

std::uint64_t elements(Extent e, std::uint64_t count, int nranks) {
  switch (e) {
    case Extent::None:
      return 0;
    case Extent::One:
      return count;
    case Extent::PerRank:
      return count * static_cast<std::uint64_t>(nranks);
    case Extent::Split:  // count is then the largest buffer of any rank
      return count;
  }
  return 0;
}

static std::uint64_t blocks(Collective c, int nranks) {
  const auto& i = info(c);
  return (i.send == Extent::PerRank || i.recv == Extent::PerRank)
             ? static_cast<std::uint64_t>(nranks)
             : 1;
}

std::uint64_t count_for_bytes(Collective c, std::uint64_t bytes, std::size_t dtype_size,
                              int nranks) {
  if (c == Collective::Barrier) return 0;
  return bytes / (dtype_size * blocks(c, nranks));
}

std::uint64_t reported_bytes(Collective c, std::uint64_t count, std::size_t dtype_size,
                             int nranks) {
  return count * dtype_size * blocks(c, nranks);
}

double bus_factor(Collective c, int nranks) {
  double n = nranks;
  switch (info(c).bus) {
    case BusFactor::AllReduce:
      return 2.0 * (n - 1) / n;
    case BusFactor::NMinus1OverN:
      return (n - 1) / n;
    case BusFactor::One:
      return 1.0;
    case BusFactor::None:
      return 0.0;
  }
  return 0.0;
}

std::uint64_t in_place_elements(Collective c, std::uint64_t count, int nranks) {
  const auto& i = info(c);
  return std::max(elements(i.send, count, nranks), elements(i.recv, count, nranks));
}

std::uint64_t in_place_input_offset(Collective c, int rank, std::uint64_t count) {
  switch (c) {
    case Collective::AllGather:
    case Collective::Gather:
      return static_cast<std::uint64_t>(rank) * count;
    default:
      return 0;
  }
}

std::uint64_t in_place_output_offset(Collective c, int rank, std::uint64_t count) {
  switch (c) {
    case Collective::ReduceScatter:
    case Collective::Scatter:
      return static_cast<std::uint64_t>(rank) * count;
    default:
      return 0;
  }
}

std::vector<Segment> expected_segments(Collective c, int rank, int nranks, int root,
                                       std::uint64_t count) {
  std::vector<Segment> out;
  auto per_rank = [&](auto src_offset_of) {
    for (int q = 0; q < nranks; ++q) {
      out.push_back({static_cast<std::uint64_t>(q) * count, count, false, q, src_offset_of(q)});
    }
  };
  std::uint64_t mine = static_cast<std::uint64_t>(rank) * count;
  switch (c) {
    case Collective::AllReduce:
      out.push_back({0, count, true, -1, 0});
      break;
    case Collective::AllGather:
      per_rank([](int) { return std::uint64_t{0}; });
      break;
    case Collective::ReduceScatter:
      out.push_back({0, count, true, -1, mine});
      break;
    case Collective::Broadcast:
      out.push_back({0, count, false, root, 0});
      break;
    case Collective::Reduce:
      if (rank == root) out.push_back({0, count, true, -1, 0});
      break;
    case Collective::AllToAll:
      per_rank([&](int) { return mine; });
      break;
    case Collective::Gather:
      if (rank == root) per_rank([](int) { return std::uint64_t{0}; });
      break;
    case Collective::Scatter:
      out.push_back({0, count, false, root, mine});
      break;
    case Collective::SendRecv:
      out.push_back({0, count, false, (rank - 1 + nranks) % nranks, 0});
      break;
    case Collective::Barrier:
      break;
    case Collective::AllToAllV:  // per-peer blocks: expected_segments(RankBlocks) in traffic.hpp
      break;
  }
  return out;
}

}  // namespace cb
