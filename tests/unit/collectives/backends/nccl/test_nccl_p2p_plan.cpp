// alltoallv's grouped ncclSend/ncclRecv plan, on the host: what NcclCommunicator issues inside
// its group for one rank's blocks.
#include <gtest/gtest.h>

#include "collectives/backends/nccl/p2p_plan.hpp"

namespace cb::nccl {
namespace {

TEST(NcclAlltoallvPlan, SendThenReceivePerPeerInRankOrderAtByteOffsets) {
  Traffic t;
  t.nranks = 3;
  t.counts = {1, 2, 3,   // rank 0 sends
              4, 0, 6,   // rank 1
              7, 8, 9};  // rank 2
  // Rank 1 sends 4 to rank 0, nothing to itself, 6 to rank 2; receives 2, 0 and 8.
  const std::vector<P2pCall> calls = alltoallv_calls(rank_blocks(t, 1), 8);
  const std::vector<P2pCall> want = {
      {true, 0, 0, 4},   // send rank 0's block from the start
      {false, 0, 0, 2},  // receive rank 0's block at the start
      {true, 2, 32, 6},  // the empty blocks to and from itself have no call
      {false, 2, 16, 8},
  };
  EXPECT_EQ(calls, want);
}

TEST(NcclAlltoallvPlan, ARankThatSendsNothingOnlyReceives) {
  Traffic t;
  t.nranks = 2;
  t.counts = {0, 0,   // rank 0 sends nothing
              5, 0};  // rank 1
  const std::vector<P2pCall> calls = alltoallv_calls(rank_blocks(t, 0), 2);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0], (P2pCall{false, 1, 0, 5}));
  EXPECT_TRUE(alltoallv_calls(rank_blocks(t, 1), 2) == (std::vector<P2pCall>{{true, 0, 0, 5}}));
}

TEST(NcclAlltoallvPlan, EveryBlockOfAZipfSplitIsSentOnceAndReceivedOnce) {
  const int n = 4;
  const Traffic t = split_traffic(parse_split("zipf:1.5"), n, 4096, 4);
  std::vector<std::uint64_t> sent(static_cast<std::size_t>(n * n)), got(sent.size());
  for (int r = 0; r < n; ++r) {
    for (const P2pCall& c : alltoallv_calls(rank_blocks(t, r), 4)) {
      auto& into = c.send ? sent : got;
      into[static_cast<std::size_t>(c.send ? r * n + c.peer : c.peer * n + r)] += c.count;
    }
  }
  EXPECT_EQ(sent, t.counts);
  EXPECT_EQ(got, t.counts);
}

}  // namespace
}  // namespace cb::nccl
