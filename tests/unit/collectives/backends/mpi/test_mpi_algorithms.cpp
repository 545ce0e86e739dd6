// The MPI algorithm tables: names, MPICH CVAR positions, and when a forced algorithm would not
// run as named (so the case is skipped rather than measured under the wrong name).
#include <gtest/gtest.h>

#include "collectives/backends/mpi/mpi_algorithm_table.hpp"

namespace cb::mpi {
namespace {

CallTraits traits(Collective c, int nranks, std::uint64_t count, bool in_place = false) {
  CallTraits t;
  t.collective = c;
  t.nranks = nranks;
  t.count = count;
  t.type_size = 4;
  t.in_place = in_place;
  return t;
}

TEST(MpiAlgorithms, Flavor) {
  EXPECT_EQ(flavor_of("Open MPI 4.1.4"), MpiFlavor::OpenMpi);
  EXPECT_EQ(flavor_of("MPICH 4.0.2"), MpiFlavor::Mpich);
  EXPECT_EQ(flavor_of("Intel MPI 2021.9"), MpiFlavor::Other);
}

TEST(MpiAlgorithms, VariableNames) {
  EXPECT_EQ(ompi_algorithm_variable(Collective::AllReduce), "coll_tuned_allreduce_algorithm");
  EXPECT_EQ(ompi_algorithm_variable(Collective::Broadcast), "coll_tuned_bcast_algorithm");
  EXPECT_EQ(ompi_algorithm_variable(Collective::ReduceScatter),
            "coll_tuned_reduce_scatter_block_algorithm");
  EXPECT_EQ(ompi_algorithm_variable(Collective::SendRecv), "");
  EXPECT_EQ(mpich_algorithm_variable(Collective::ReduceScatter),
            "MPIR_CVAR_REDUCE_SCATTER_BLOCK_INTRA_ALGORITHM");
  EXPECT_EQ(mpich_device_variable(Collective::AllReduce), "MPIR_CVAR_ALLREDUCE_DEVICE_COLLECTIVE");
}

TEST(MpiAlgorithms, MpichPositionsFollowTheCvarList) {
  // MPICH 4.0.2: auto, nb, smp, recursive_doubling, reduce_scatter_allgather
  EXPECT_EQ(mpich_algorithm_value(Collective::AllReduce, "nb"), 1);
  EXPECT_EQ(mpich_algorithm_value(Collective::AllReduce, "recursive_doubling"), 3);
  EXPECT_EQ(mpich_algorithm_value(Collective::AllReduce, "reduce_scatter_allgather"), 4);
  // reduce_scatter_block lists nb last.
  EXPECT_EQ(mpich_algorithm_value(Collective::ReduceScatter, "nb"), 5);
  EXPECT_EQ(mpich_algorithm_value(Collective::Broadcast, "scatter_ring_allgather"), 5);
  EXPECT_FALSE(mpich_algorithm_value(Collective::AllReduce, "ring").has_value());
}

TEST(MpiAlgorithms, OpenMpiKnownNamesMatchTheIds) {
  auto a = ompi_known_algorithms(Collective::AllReduce);
  ASSERT_EQ(a.size(), 6u);
  EXPECT_EQ(a[3], "ring");  // ID 4
  EXPECT_EQ(ompi_known_algorithms(Collective::Broadcast).size(), 9u);
}

TEST(MpiAlgorithms, OpenMpiSilentFallbacksAreReported) {
  const auto O = MpiFlavor::OpenMpi;
  EXPECT_NE(inapplicable_reason(O, "ring", traits(Collective::AllReduce, 4, 2)), "");
  EXPECT_EQ(inapplicable_reason(O, "ring", traits(Collective::AllReduce, 4, 4)), "");
  EXPECT_NE(inapplicable_reason(O, "rabenseifner", traits(Collective::AllReduce, 6, 3)), "");
  EXPECT_EQ(inapplicable_reason(O, "rabenseifner", traits(Collective::AllReduce, 6, 4)), "");
  // segmented_ring needs at least nranks 1 MiB segments.
  EXPECT_NE(inapplicable_reason(O, "segmented_ring", traits(Collective::AllReduce, 2, 262144)), "");
  EXPECT_EQ(inapplicable_reason(O, "segmented_ring", traits(Collective::AllReduce, 2, 524288)), "");
  EXPECT_NE(inapplicable_reason(O, "recursive_doubling", traits(Collective::AllGather, 3, 8)), "");
  EXPECT_NE(inapplicable_reason(O, "neighbor", traits(Collective::AllGather, 3, 8)), "");
  EXPECT_NE(inapplicable_reason(O, "two_proc", traits(Collective::Barrier, 3, 0)), "");
  EXPECT_EQ(inapplicable_reason(O, "two_proc", traits(Collective::Barrier, 2, 0)), "");
  EXPECT_NE(inapplicable_reason(O, "pairwise", traits(Collective::AllToAll, 2, 8, true)), "");
  EXPECT_NE(inapplicable_reason(O, "scatter_allgather", traits(Collective::Broadcast, 4, 3)), "");
  EXPECT_EQ(inapplicable_reason(O, "default", traits(Collective::AllReduce, 4, 1)), "");
}

TEST(MpiAlgorithms, MpichRestrictionsAreReported) {
  const auto M = MpiFlavor::Mpich;
  EXPECT_NE(inapplicable_reason(M, "reduce_scatter_allgather", traits(Collective::AllReduce, 2, 1)),
            "");
  EXPECT_EQ(inapplicable_reason(M, "reduce_scatter_allgather", traits(Collective::AllReduce, 2, 2)),
            "");
  CallTraits user_op = traits(Collective::AllReduce, 2, 64);
  user_op.builtin_op = false;
  EXPECT_NE(inapplicable_reason(M, "reduce_scatter_allgather", user_op), "");
  EXPECT_NE(inapplicable_reason(M, "smp", traits(Collective::AllReduce, 2, 64)), "");
  CallTraits spread = traits(Collective::AllReduce, 4, 64);
  spread.multi_node = true;
  EXPECT_EQ(inapplicable_reason(M, "smp", spread), "");
  EXPECT_NE(inapplicable_reason(M, "recursive_doubling", traits(Collective::AllGather, 3, 8)), "");
  EXPECT_NE(inapplicable_reason(M, "brucks", traits(Collective::AllToAll, 2, 8, true)), "");
  EXPECT_NE(inapplicable_reason(M, "pairwise_sendrecv_replace", traits(Collective::AllToAll, 2, 8)),
            "");
  EXPECT_EQ(
      inapplicable_reason(M, "pairwise_sendrecv_replace", traits(Collective::AllToAll, 2, 8, true)),
      "");
  EXPECT_NE(inapplicable_reason(M, "noncommutative", traits(Collective::ReduceScatter, 3, 8)), "");
  EXPECT_EQ(inapplicable_reason(M, "nb", traits(Collective::AllReduce, 3, 1)), "");
}

}  // namespace
}  // namespace cb::mpi
