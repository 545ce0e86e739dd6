#include <gtest/gtest.h>

#include "collectives/catalogue/catalogue.hpp"
#include "collectives/catalogue/dtype.hpp"

namespace cb {
namespace {

// busbw factors computed by hand for n = 1, 2, 3, 4, 8 (nccl-tests convention).
TEST(BusFactor, MatchesHandComputedValues) {
  struct Expect {
    Collective c;
    double f2, f3, f4, f8;
  };
  const Expect table[] = {
      {Collective::AllReduce, 1.0, 4.0 / 3, 1.5, 1.75},
      {Collective::AllGather, 0.5, 2.0 / 3, 0.75, 0.875},
      {Collective::ReduceScatter, 0.5, 2.0 / 3, 0.75, 0.875},
      {Collective::AllToAll, 0.5, 2.0 / 3, 0.75, 0.875},
      {Collective::Gather, 0.5, 2.0 / 3, 0.75, 0.875},
      {Collective::Scatter, 0.5, 2.0 / 3, 0.75, 0.875},
      {Collective::Broadcast, 1, 1, 1, 1},
      {Collective::Reduce, 1, 1, 1, 1},
      {Collective::SendRecv, 1, 1, 1, 1},
  };
  for (const auto& e : table) {
    SCOPED_TRACE(std::string(name(e.c)));
    EXPECT_DOUBLE_EQ(bus_factor(e.c, 2), e.f2);
    EXPECT_DOUBLE_EQ(bus_factor(e.c, 3), e.f3);
    EXPECT_DOUBLE_EQ(bus_factor(e.c, 4), e.f4);
    EXPECT_DOUBLE_EQ(bus_factor(e.c, 8), e.f8);
  }
  EXPECT_DOUBLE_EQ(bus_factor(Collective::AllReduce, 1), 0.0);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::Barrier, 4), 0.0);
}

TEST(Sizes, NcclTestsConventionForBlockCollectives) {
  // 1 MiB of float over 4 ranks: allreduce moves 262144 elements; allgather 65536 per rank.
  EXPECT_EQ(count_for_bytes(Collective::AllReduce, 1 << 20, 4, 4), 262144u);
  EXPECT_EQ(count_for_bytes(Collective::AllGather, 1 << 20, 4, 4), 65536u);
  EXPECT_EQ(reported_bytes(Collective::AllGather, 65536, 4, 4), 1u << 20);
  EXPECT_EQ(reported_bytes(Collective::AllReduce, 262144, 4, 4), 1u << 20);
  EXPECT_EQ(reported_bytes(Collective::Scatter, 10, 8, 3), 240u);
}

TEST(Sizes, CountsRoundDownAndTooSmallIsZero) {
  // 3 ranks, float, 16 bytes: one element per rank (12 bytes reported).
  EXPECT_EQ(count_for_bytes(Collective::AllGather, 16, 4, 3), 1u);
  EXPECT_EQ(reported_bytes(Collective::AllGather, 1, 4, 3), 12u);
  EXPECT_EQ(count_for_bytes(Collective::AllToAll, 8, 4, 3), 0u);
  EXPECT_EQ(count_for_bytes(Collective::AllReduce, 10, 4, 3), 2u);  // whole elements only
  EXPECT_EQ(count_for_bytes(Collective::Barrier, 1 << 20, 4, 2), 0u);
}

TEST(Buffers, ExtentsPerCollective) {
  EXPECT_EQ(elements(info(Collective::ReduceScatter).send, 5, 3), 15u);
  EXPECT_EQ(elements(info(Collective::ReduceScatter).recv, 5, 3), 5u);
  EXPECT_EQ(elements(info(Collective::Gather).recv, 5, 3), 15u);
  EXPECT_EQ(in_place_elements(Collective::AllToAll, 5, 3), 15u);
  EXPECT_EQ(in_place_input_offset(Collective::AllGather, 2, 5), 10u);
  EXPECT_EQ(in_place_output_offset(Collective::Scatter, 2, 5), 10u);
  EXPECT_EQ(in_place_output_offset(Collective::AllReduce, 2, 5), 0u);
}

TEST(Names, AliasesParse) {
  EXPECT_EQ(parse_collective("all_reduce"), Collective::AllReduce);
  EXPECT_EQ(parse_collective("bcast"), Collective::Broadcast);
  EXPECT_EQ(parse_collective("reducescatter"), Collective::ReduceScatter);
  EXPECT_FALSE(parse_collective("allreduc").has_value());
  EXPECT_EQ(parse_collective("all_to_allv"), Collective::AllToAllV);
  EXPECT_EQ(all_collectives().size(), 11u);
}

TEST(Expected, SegmentsDescribeWhereDataComesFrom) {
  auto a2a = expected_segments(Collective::AllToAll, 1, 3, 0, 4);
  ASSERT_EQ(a2a.size(), 3u);
  for (int q = 0; q < 3; ++q) {
    EXPECT_EQ(a2a[q].dst_offset, 4u * q);
    EXPECT_EQ(a2a[q].source, q);
    EXPECT_EQ(a2a[q].src_offset, 4u);  // block for rank 1 of every sender
  }
  auto rs = expected_segments(Collective::ReduceScatter, 2, 3, 0, 4);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_TRUE(rs[0].reduced);
  EXPECT_EQ(rs[0].src_offset, 8u);
  EXPECT_TRUE(expected_segments(Collective::Reduce, 1, 3, 0, 4).empty());
  EXPECT_EQ(expected_segments(Collective::SendRecv, 0, 3, 0, 4)[0].source, 2);
  EXPECT_EQ(expected_segments(Collective::Scatter, 1, 3, 2, 4)[0].source, 2);
}

TEST(DTypes, ParseAndEncode) {
  EXPECT_EQ(parse_dtype("fp16"), DType::Half);
  EXPECT_EQ(parse_dtype("bf16"), DType::BFloat16);
  EXPECT_FALSE(parse_dtype("float128").has_value());
  unsigned char buf[8];
  for (DType t : {DType::Int8, DType::Uint8, DType::Int32, DType::Uint32, DType::Int64,
                  DType::Uint64, DType::Half, DType::BFloat16, DType::Float, DType::Double}) {
    SCOPED_TRACE(std::string(info(t).name));
    for (std::int64_t v : {0, 1, 2, 7, 100, 127}) {
      encode_integer(t, v, buf);
      EXPECT_EQ(decode_value(t, buf), static_cast<double>(v));
    }
  }
  for (std::int64_t v : {0, 1, 3, 8, 12, 16}) {
    encode_integer(DType::Fp8E4M3, v, buf);
    EXPECT_EQ(decode_value(DType::Fp8E4M3, buf), static_cast<double>(v));
  }
  encode_integer(DType::Half, 2048, buf);
  EXPECT_EQ(decode_value(DType::Half, buf), 2048.0);
}

}  // namespace
}  // namespace cb
