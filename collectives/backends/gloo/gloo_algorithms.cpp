#include "collectives/backends/gloo/gloo_algorithms.hpp"

#include <algorithm>

namespace cb::gloo_backend {

namespace {

struct Entry {
  Collective collective;
  std::string_view default_runs;
  std::vector<GlooAlgorithm> algorithms;
  std::string_view implementation;
};

const std::vector<Entry>& table() {
  static const std::vector<Entry> kTable = {
      {Collective::AllReduce,
       "gloo::allreduce (ring)",
       {{"ring", "legacy AllreduceRing"},
        {"ring_chunked", "legacy AllreduceRingChunked"},
        {"halving_doubling", "legacy AllreduceHalvingDoubling"},
        {"bcube", "legacy AllreduceBcube"},
        {"new_ring", "gloo::allreduce, algorithm RING"},
        {"new_bcube", "gloo::allreduce, algorithm BCUBE"}},
       "native: gloo::allreduce; legacy classes run in place (out of place copies the input "
       "first)"},
      {Collective::AllGather,
       "gloo::allgather (ring)",
       {{"ring", "legacy AllgatherRing"}},
       "native: gloo::allgather, legacy AllgatherRing"},
      // Gloo has no new-style reduce_scatter. The legacy class races (a rank other than 0 moves
      // its block to the start of its buffer before its send of that region has left, so a
      // full socket sends some of the block instead), so the default is the composed ring.
      {Collective::ReduceScatter,
       "composed ring (legacy ReduceScatterHalvingDoubling races: see halving_doubling)",
       {{"halving_doubling",
         "legacy ReduceScatterHalvingDoubling (races: ranks other than 0 overwrite data still "
         "being sent; validation fails now and then under load)"},
        {"ring", "composed: ring of unbound-buffer send/recv with local reductions"}},
       "composed: ring of unbound-buffer send/recv with local reductions (default); native: "
       "legacy ReduceScatterHalvingDoubling (in place; out of place through a scratch copy)"},
      {Collective::Broadcast,
       "gloo::broadcast (binomial tree)",
       {{"one_to_all", "legacy BroadcastOneToAll"}},
       "native: gloo::broadcast, legacy BroadcastOneToAll"},
      {Collective::Reduce, "gloo::reduce (ring)", {}, "native: gloo::reduce"},
      {Collective::AllToAll,
       "gloo::alltoall (pairwise)",
       {},
       "native: gloo::alltoall (in place through a scratch copy)"},
      {Collective::Gather, "gloo::gather", {}, "native: gloo::gather"},
      {Collective::Scatter, "gloo::scatter", {}, "native: gloo::scatter"},
      {Collective::SendRecv,
       "composed ring shift",
       {},
       "composed: unbound-buffer send to rank+1, recv from rank-1"},
      {Collective::Barrier,
       "gloo::barrier",
       {{"all_to_all", "legacy BarrierAllToAll"}, {"all_to_one", "legacy BarrierAllToOne"}},
       "native: gloo::barrier, legacy BarrierAllToAll, BarrierAllToOne"},
      {Collective::AllToAllV,
       "gloo::alltoallv (pairwise)",
       {},
       "native: gloo::alltoallv (out of place only)"},
  };
  return kTable;
}

const Entry& entry(Collective c) {
  for (const auto& e : table()) {
    if (e.collective == c) return e;
  }
  return table().front();
}

}  // namespace

const std::vector<GlooAlgorithm>& gloo_algorithms(Collective c) {
  return entry(c).algorithms;
}

bool is_gloo_algorithm(Collective c, std::string_view name) {
  const auto& a = gloo_algorithms(c);
  return std::any_of(a.begin(), a.end(), [&](const GlooAlgorithm& g) { return g.name == name; });
}

std::string_view gloo_default(Collective c) {
  return entry(c).default_runs;
}

std::string gloo_implementation(Collective c) {
  return std::string(entry(c).implementation);
}

}  // namespace cb::gloo_backend
