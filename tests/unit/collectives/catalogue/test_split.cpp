// alltoallv's splits: parsing --split, the matrices each distribution makes, their figures, and
// one rank's blocks.
#include <gtest/gtest.h>

#include <numeric>

#include "collectives/catalogue/moe_router.hpp"
#include "collectives/catalogue/split.hpp"
#include "collectives/catalogue/traffic.hpp"
#include "common/error.hpp"

namespace cb {
namespace {

std::vector<std::uint64_t> row(const Traffic& t, int i) {
  std::vector<std::uint64_t> out;
  for (int j = 0; j < t.nranks; ++j) out.push_back(t.at(i, j));
  return out;
}

std::uint64_t total(const Traffic& t) {
  return std::accumulate(t.counts.begin(), t.counts.end(), std::uint64_t{0});
}

TEST(SplitParse, EveryDistributionAndItsCanonicalName) {
  EXPECT_EQ(split_name(parse_split("uniform")), "uniform");
  EXPECT_EQ(parse_split("distance").spread, 1.0);  // nccl-tests' default
  EXPECT_EQ(split_name(parse_split("distance:0.25")), "distance:0.25");
  EXPECT_EQ(split_name(parse_split("zipf:1.2")), "zipf:1.2");
  const SplitSpec moe = parse_split("moe:64,8,4,1.25");
  EXPECT_EQ(moe.moe.experts, 64);
  EXPECT_EQ(moe.moe.topk, 8);
  EXPECT_EQ(moe.moe.groups, 4);
  EXPECT_EQ(moe.moe.capacity, 1.25);
  EXPECT_EQ(split_name(moe), "moe:64,8,4,1.25");
  EXPECT_EQ(split_name(parse_split("moe:64,8")), "moe:64,8");
  EXPECT_EQ(split_name(parse_split("moe:64,8,,1.5")), "moe:64,8,0,1.5");  // CF without G
  EXPECT_EQ(split_name(parse_split("matrix:/tmp/m.txt")), "matrix:/tmp/m.txt");
}

TEST(SplitParse, BadValuesAreUsageErrorsNamingTheValue) {
  for (const char* bad :
       {"", "even", "uniform:1", "distance:1.5", "distance:-0.1", "distance:x", "zipf", "zipf:-1",
        "zipf:nan", "moe", "moe:64", "moe:64,0", "moe:8,9", "moe:0,1", "moe:64,8,-1",
        "moe:64,8,2,-1", "moe:64,8,2,1,1", "moe:a,b", "matrix:"}) {
    try {
      parse_split(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage) << bad;
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos)
          << e.what();
    }
  }
}

TEST(SplitParse, MatrixTextIsSquareNonNegativeWholeBytes) {
  SplitSpec s = parse_split("matrix:m");
  parse_matrix_text("# bytes i -> j\n0 16 32\n 48 0 16 # row 1\n\n16 16 0\n", "m", s);
  EXPECT_EQ(s.matrix_ranks, 3);
  EXPECT_EQ(s.matrix, (std::vector<std::uint64_t>{0, 16, 32, 48, 0, 16, 16, 16, 0}));
  for (const char* bad :
       {"", "1 2\n3\n", "1 2\n3 4\n5 6\n", "1 -2\n3 4\n", "1 2.5\n3 4\n", "1 x\n3 4\n"}) {
    EXPECT_THROW(parse_matrix_text(bad, "m", s), Error) << bad;
  }
  try {
    parse_matrix_text("1 2\n3\n", "m.txt", s);
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "m.txt:2: 1 values where the first row has 2");
  }
}

TEST(SplitParse, WhatARankCountCannotTake) {
  EXPECT_EQ(split_unfit(parse_split("moe:6,2"), 3), "");
  EXPECT_EQ(split_unfit(parse_split("moe:6,2"), 4), "6 experts do not spread evenly over 4 ranks");
  EXPECT_NE(split_unfit(parse_split("moe:8,2,5"), 4), "");  // G beyond the ranks
  EXPECT_NE(split_unfit(parse_split("moe:8,4,1"), 4), "");  // 1 rank of 2 experts < K
  EXPECT_EQ(split_unfit(parse_split("moe:8,4,2"), 4), "");
  SplitSpec m = parse_split("matrix:m");
  parse_matrix_text("1 2\n3 4\n", "m", m);
  EXPECT_EQ(split_unfit(m, 2), "");
  EXPECT_EQ(split_unfit(m, 3), "m is a 2x2 matrix for 2 ranks, and there are 3");
}

TEST(Traffic, UniformIsAlltoallsBlocks) {
  const Traffic t = split_traffic(parse_split("uniform"), 3, 100, 4);
  EXPECT_EQ(t.counts, std::vector<std::uint64_t>(9, 33));
  const TrafficFigures f = traffic_figures(t);
  EXPECT_EQ(f.total, 297u);
  EXPECT_DOUBLE_EQ(f.incast, 1.0);
  EXPECT_DOUBLE_EQ(f.send_skew, 1.0);
  EXPECT_TRUE(f.symmetric);
  EXPECT_FALSE(f.drop_share);
}

// nccl-tests' alltoallv.cu at 4 ranks, 4 KiB of float per rank: per-peer bytes
// (1-S) T/4 + S d T/6 rounded down to 16 bytes, d = (j - i) mod 4.
TEST(Traffic, DistanceIsNcclTestsSpreadFormula) {
  const Traffic full = split_traffic(parse_split("distance:1"), 4, 1024, 4);
  // 4096 d / 6 bytes: 0, 682.7 -> 672, 1365.3 -> 1360, 2048, as floats.
  EXPECT_EQ(row(full, 0), (std::vector<std::uint64_t>{0, 168, 340, 512}));
  EXPECT_EQ(row(full, 1), (std::vector<std::uint64_t>{512, 0, 168, 340}));
  const TrafficFigures f = traffic_figures(full);
  EXPECT_DOUBLE_EQ(f.incast, 1.0);  // every rank sends and receives the same total
  EXPECT_DOUBLE_EQ(f.send_skew, 1.0);
  EXPECT_FALSE(f.symmetric);
  const Traffic half = split_traffic(parse_split("distance:0.5"), 4, 1024, 4);
  // 512 + 4096 d / 12: 512, 853.3 -> 848, 1194.7 -> 1184, 1536.
  EXPECT_EQ(row(half, 0), (std::vector<std::uint64_t>{128, 212, 296, 384}));
  EXPECT_EQ(split_traffic(parse_split("distance:0"), 4, 1024, 4).counts,
            std::vector<std::uint64_t>(16, 256));
  // The per-peer count rounds down to 16 bytes first: 1000 floats -> 248 per peer.
  EXPECT_EQ(row(split_traffic(parse_split("distance:0"), 4, 1000, 4), 0),
            (std::vector<std::uint64_t>{248, 248, 248, 248}));
  EXPECT_EQ(split_traffic(parse_split("distance"), 1, 1001, 4).counts,
            std::vector<std::uint64_t>{1000});
}

TEST(Traffic, ZipfMakesHotReceiversWhoseIncastGrowsWithA) {
  // Two ranks, A = 1: shares 1 : 1/2 of every rank's 300 elements.
  const Traffic t = split_traffic(parse_split("zipf:1"), 2, 300, 4);
  EXPECT_EQ(row(t, 0), (std::vector<std::uint64_t>{200, 100}));
  EXPECT_EQ(row(t, 1), (std::vector<std::uint64_t>{200, 100}));
  const TrafficFigures f = traffic_figures(t);
  EXPECT_DOUBLE_EQ(f.incast, 400.0 / 300.0);
  EXPECT_DOUBLE_EQ(f.send_skew, 1.0);
  double previous = 0;
  for (double a : {0.0, 0.5, 1.0, 2.0, 4.0}) {
    SplitSpec s;
    s.kind = SplitKind::Zipf;
    s.zipf = a;
    const TrafficFigures g = traffic_figures(split_traffic(s, 4, 1000, 4));
    EXPECT_EQ(g.total, 4000u);  // every row apportions exactly the asked elements
    if (a == 0) {
      EXPECT_DOUBLE_EQ(g.incast, 1.0);
    }
    EXPECT_GT(g.incast, previous);
    previous = g.incast;
  }
}

TEST(Traffic, ApportionByLargestRemainderTiesToTheLowerIndex) {
  EXPECT_EQ(apportion({1, 1, 1}, 10), (std::vector<std::uint64_t>{4, 3, 3}));
  EXPECT_EQ(apportion({1, 2}, 7), (std::vector<std::uint64_t>{2, 5}));
  EXPECT_EQ(apportion({0, 0}, 7), (std::vector<std::uint64_t>{0, 0}));
  EXPECT_EQ(apportion({3, 0, 1}, 0), (std::vector<std::uint64_t>{0, 0, 0}));
}

TEST(Traffic, MatrixBytesRoundDownToWholeElements) {
  SplitSpec s = parse_split("matrix:m");
  parse_matrix_text("0 9\n16 4\n", "m", s);
  const Traffic t = split_traffic(s, 2, 12345, 4);  // the size axis does not apply
  EXPECT_EQ(t.counts, (std::vector<std::uint64_t>{0, 2, 4, 1}));
}

SplitSpec moe(const char* text, std::uint64_t seed = 1, std::uint64_t hidden = 1) {
  SplitSpec s = parse_split(text);
  s.seed = seed;
  s.moe_hidden = hidden;
  return s;
}

TEST(MoeRouter, EveryTokenGoesToKExpertsAndTheSeedDecidesWhich) {
  const MoeRoute r = route_tokens(moe("moe:8,2").moe, 4, 1000, 7);
  EXPECT_EQ(r.routed, 4u * 1000 * 2);
  EXPECT_EQ(r.dropped, 0u);
  EXPECT_EQ(std::accumulate(r.copies.begin(), r.copies.end(), std::uint64_t{0}), 8000u);
  EXPECT_EQ(route_tokens(moe("moe:8,2").moe, 4, 1000, 7).copies, r.copies);
  EXPECT_NE(route_tokens(moe("moe:8,2").moe, 4, 1000, 8).copies, r.copies);
  // A rank's first tokens route alike whatever the count: the scores are drawn in token order.
  const MoeRoute one = route_tokens(moe("moe:8,2").moe, 4, 1, 7);
  const MoeRoute two = route_tokens(moe("moe:8,2").moe, 4, 2, 7);
  for (std::size_t k = 0; k < one.copies.size(); ++k) EXPECT_LE(one.copies[k], two.copies[k]);
}

TEST(MoeRouter, GroupLimitKeepsATokensExpertsOnGRanks) {
  // One token per rank, K = 4 of 16 experts, at most 1 rank (4 experts each): all four copies go
  // to one rank; without the limit they spread (for this seed) over more.
  const MoeRoute limited = route_tokens(moe("moe:16,4,1").moe, 4, 1, 3);
  for (int i = 0; i < 4; ++i) {
    int ranks = 0;
    for (int j = 0; j < 4; ++j) ranks += limited.copies[static_cast<std::size_t>(i * 4 + j)] > 0;
    EXPECT_EQ(ranks, 1) << "rank " << i;
  }
  const MoeRoute free = route_tokens(moe("moe:16,4").moe, 4, 1, 3);
  int spread = 0;
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) spread += free.copies[static_cast<std::size_t>(i * 4 + j)] > 0;
  }
  EXPECT_GT(spread, 4);
}

TEST(MoeRouter, CapacityDropsCopiesBeyondCfTimesTheFairShare) {
  // 1000 tokens x K 2 over 8 experts: 250 each on average. CF 1: the busiest experts overflow.
  const MoeRoute tight = route_tokens(moe("moe:8,2,0,1").moe, 2, 1000, 1);
  EXPECT_GT(tight.dropped, 0u);
  EXPECT_EQ(std::accumulate(tight.copies.begin(), tight.copies.end(), std::uint64_t{0}),
            tight.routed - tight.dropped);
  // No rank sends an expert more than ceil(CF x 250): 4 experts per rank, so 1000 per pair.
  for (std::uint64_t c : tight.copies) EXPECT_LE(c, 1000u);
  EXPECT_EQ(route_tokens(moe("moe:8,2,0,100").moe, 2, 1000, 1).dropped, 0u);
  // CF 0.5: 125 copies per expert from each rank, 8 x 125 of its 2000 kept, the rest dropped.
  const MoeRoute half = route_tokens(moe("moe:8,2,0,0.5").moe, 2, 1000, 1);
  EXPECT_EQ(half.dropped, 2u * (2000 - 8 * 125));
}

TEST(Traffic, MoeSendsHiddenElementsPerTokenCopyAndReportsTheDrops) {
  // 2 ranks, K = 2, hidden 16: 4 tokens per rank at 128 elements.
  const SplitSpec s = moe("moe:4,2,0,1", 5, 16);
  const Traffic t = split_traffic(s, 2, 128, 2);
  for (std::uint64_t c : t.counts) EXPECT_EQ(c % 16, 0u);
  const MoeRoute r = route_tokens(s.moe, 2, 4, 5);
  EXPECT_EQ(total(t), (r.routed - r.dropped) * 16);
  ASSERT_TRUE(t.drop_share);
  EXPECT_DOUBLE_EQ(*t.drop_share, static_cast<double>(r.dropped) / r.routed);
  EXPECT_EQ(total(split_traffic(s, 2, 31, 2)), 0u);  // less than one token: nothing to send
}

TEST(Traffic, UniformTwinKeepsTheTotalAndNoRankAboveTheMean) {
  const Traffic z = split_traffic(parse_split("zipf:1.5"), 3, 1001, 4);
  const Traffic u = uniform_like(z);
  const TrafficFigures fz = traffic_figures(z), fu = traffic_figures(u);
  EXPECT_EQ(fu.total, fz.total);
  const std::uint64_t ceil_mean = (fu.total + 2) / 3;
  EXPECT_LE(fu.max_send, ceil_mean);
  EXPECT_LE(fu.max_recv, ceil_mean);
  EXPECT_LE(fu.max_recv, fz.max_recv);
  // In place (MPI needs symmetric counts) the remainder goes where it would break the symmetry.
  Traffic odd;
  odd.nranks = 2;
  odd.counts = {7, 0, 0, 0};
  EXPECT_EQ(uniform_like(odd).counts, (std::vector<std::uint64_t>{2, 2, 1, 2}));
  EXPECT_EQ(uniform_like(odd, true).counts, (std::vector<std::uint64_t>{1, 1, 1, 1}));
  odd.counts = {6, 0, 0, 0};
  EXPECT_EQ(uniform_like(odd, true).counts, (std::vector<std::uint64_t>{2, 1, 1, 2}));
}

TEST(Traffic, RankBlocksArePackedInRankOrderAndNameEachSourcesOffset) {
  Traffic t;
  t.nranks = 3;
  t.counts = {1, 2, 3,   // rank 0 sends
              4, 0, 6,   // rank 1
              7, 8, 9};  // rank 2
  const RankBlocks b = rank_blocks(t, 1);
  EXPECT_EQ(b.send_counts, (std::vector<std::uint64_t>{4, 0, 6}));
  EXPECT_EQ(b.send_displs, (std::vector<std::uint64_t>{0, 4, 4}));
  EXPECT_EQ(b.recv_counts, (std::vector<std::uint64_t>{2, 0, 8}));
  EXPECT_EQ(b.recv_displs, (std::vector<std::uint64_t>{0, 2, 2}));
  // Rank 0's block for rank 1 follows its block for rank 0; rank 2's follows 7 elements.
  EXPECT_EQ(b.src_offsets, (std::vector<std::uint64_t>{1, 4, 7}));
  EXPECT_EQ(b.send_total, 10u);
  EXPECT_EQ(b.recv_total, 10u);
  const std::vector<Segment> seg = expected_segments(b);
  ASSERT_EQ(seg.size(), 2u);  // nothing from itself
  EXPECT_EQ(seg[0].source, 0);
  EXPECT_EQ(seg[0].dst_offset, 0u);
  EXPECT_EQ(seg[0].length, 2u);
  EXPECT_EQ(seg[0].src_offset, 1u);
  EXPECT_FALSE(seg[0].reduced);
  EXPECT_EQ(seg[1].source, 2);
  EXPECT_EQ(seg[1].dst_offset, 2u);
  EXPECT_EQ(seg[1].length, 8u);
  EXPECT_EQ(seg[1].src_offset, 7u);
}

TEST(Traffic, ChecksumTellsMatricesApart) {
  const Traffic a = split_traffic(parse_split("zipf:1"), 3, 99, 4);
  Traffic b = a;
  EXPECT_EQ(traffic_checksum(a), traffic_checksum(b));
  ++b.counts[4];
  EXPECT_NE(traffic_checksum(a), traffic_checksum(b));
}

}  // namespace
}  // namespace cb
