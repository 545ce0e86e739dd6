// FSDP's flat-parameter padding: each unit chunked into world-size shards of ceil(numel / world)
// elements (torch.chunk), each rank's shard padded to that length.
#include <gtest/gtest.h>

#include "collectives/patterns/fsdp_units.hpp"
#include "common/error.hpp"

namespace cb {
namespace {

TEST(FsdpUnits, UnitsInFirstAppearanceOrderPaddedToEqualShards) {
  std::vector<Param> p = {{"a", DType::Float, 3, {}, ""},
                          {"b", DType::Float, 7, {}, "blk.0"},
                          {"c", DType::Float, 4, {}, "blk.0"},
                          {"d", DType::Float, 2, {}, ""},
                          {"e", DType::Float, 5, {}, "blk.1"}};
  const auto u = fsdp_units(p, 4);
  ASSERT_EQ(u.size(), 3u);
  EXPECT_EQ(u[0].name, "");
  EXPECT_EQ(u[0].params, (std::vector<std::size_t>{0, 3}));
  EXPECT_EQ(u[0].numel, 5u);
  // 5 elements over 4 ranks: torch.chunk makes 3 chunks of 2; every shard is 2 long, padded.
  EXPECT_EQ(u[0].shard, 2u);
  EXPECT_EQ(u[0].padded(), 8u);
  EXPECT_EQ(u[1].name, "blk.0");
  EXPECT_EQ(u[1].numel, 11u);
  EXPECT_EQ(u[1].shard, 3u);
  EXPECT_EQ(u[1].padded(), 12u);
  EXPECT_EQ(u[2].shard, 2u);
}

TEST(FsdpUnits, AUnitDividingEvenlyIsNotPadded) {
  std::vector<Param> p = {{"w", DType::BFloat16, 1024, {}, "x"}};
  const auto u = fsdp_units(p, 8);
  EXPECT_EQ(u[0].shard, 128u);
  EXPECT_EQ(u[0].padded(), 1024u);
}

TEST(FsdpUnits, AUnitOfTwoDtypesIsRefused) {
  std::vector<Param> p = {{"w", DType::Float, 4, {}, "x"}, {"b", DType::Half, 4, {}, "x"}};
  EXPECT_THROW(fsdp_units(p, 2), Error);
}

}  // namespace
}  // namespace cb
