// NCCL ABI declarations against NCCL's own header values (see docs/backend-nccl.md).
#include <gtest/gtest.h>

#include <cstddef>

#include "collectives/backends/nccl/nccl_abi.hpp"

namespace cb::nccl {
namespace {

TEST(NcclAbi, ConfigLayoutMatchesTheNewestHeader) {
  // LP64 offsets of ncclConfig_t fields, 2.14 to 2.30.
  EXPECT_EQ(offsetof(Config, size), 0u);
  EXPECT_EQ(offsetof(Config, magic), 8u);
  EXPECT_EQ(offsetof(Config, version), 12u);
  EXPECT_EQ(offsetof(Config, blocking), 16u);
  EXPECT_EQ(offsetof(Config, cgaClusterSize), 20u);
  EXPECT_EQ(offsetof(Config, minCTAs), 24u);
  EXPECT_EQ(offsetof(Config, maxCTAs), 28u);
  EXPECT_EQ(offsetof(Config, netName), 32u);
  EXPECT_EQ(offsetof(Config, splitShare), 40u);
  EXPECT_EQ(offsetof(Config, trafficClass), 44u);
  EXPECT_EQ(offsetof(Config, commName), 48u);
  EXPECT_EQ(offsetof(Config, collnetEnable), 56u);
  EXPECT_EQ(offsetof(Config, CTAPolicy), 60u);
  EXPECT_EQ(offsetof(Config, shrinkShare), 64u);
  EXPECT_EQ(offsetof(Config, nvlsCTAs), 68u);
  EXPECT_EQ(offsetof(Config, nChannelsPerNetPeer), 72u);
  EXPECT_EQ(offsetof(Config, nvlinkCentricSched), 76u);
  EXPECT_EQ(offsetof(Config, graphUsageMode), 80u);
  EXPECT_EQ(offsetof(Config, numRmaCtx), 84u);
  EXPECT_EQ(offsetof(Config, maxP2pPeers), 88u);
  EXPECT_EQ(offsetof(Config, graphStreamOrdering), 92u);
  EXPECT_EQ(sizeof(Config), 96u);
  EXPECT_EQ(sizeof(UniqueId), 128u);
}

TEST(NcclAbi, ConfigSizeFollowsTheLoadedRelease) {
  EXPECT_EQ(config_size_for(version_code(2, 13, 4)), 0u);  // no ncclConfig_t yet
  EXPECT_EQ(config_size_for(version_code(2, 14, 3)), 24u);
  EXPECT_EQ(config_size_for(version_code(2, 16, 5)), 24u);
  EXPECT_EQ(config_size_for(version_code(2, 17, 1)), 40u);
  EXPECT_EQ(config_size_for(version_code(2, 18, 3)), 48u);
  EXPECT_EQ(config_size_for(version_code(2, 26, 2)), 48u);  // trafficClass fits in the padding
  EXPECT_EQ(config_size_for(version_code(2, 27, 3)), 72u);
  EXPECT_EQ(config_size_for(version_code(2, 28, 9)), 80u);  // checked against 2.28.9's header
  EXPECT_EQ(config_size_for(version_code(2, 29, 7)), 88u);
  EXPECT_EQ(config_size_for(version_code(2, 30, 7)), 96u);
}

TEST(NcclAbi, MakeConfigIsTheInitializerWithBlockingSet) {
  Config c = make_config(version_code(2, 28, 9), false);
  EXPECT_EQ(c.size, 80u);
  EXPECT_EQ(c.magic, 0xcafebeefu);
  EXPECT_EQ(c.version, 22809u);
  EXPECT_EQ(c.blocking, 0);
  EXPECT_EQ(c.cgaClusterSize, INT_MIN);
  EXPECT_EQ(c.maxCTAs, INT_MIN);
  EXPECT_EQ(c.netName, nullptr);
  EXPECT_EQ(c.commName, nullptr);
  EXPECT_EQ(c.CTAPolicy, INT_MIN);
  EXPECT_EQ(c.nvlinkCentricSched, INT_MIN);
  EXPECT_EQ(c.graphStreamOrdering, INT_MIN);
  EXPECT_EQ(make_config(version_code(2, 14, 3), true).blocking, 1);
}

TEST(NcclAbi, VersionCodesDecodeInBothEncodings) {
  EXPECT_EQ(decode_version(22809).text(), "2.28.9");
  EXPECT_EQ(decode_version(21403).text(), "2.14.3");
  EXPECT_EQ(decode_version(23007).text(), "2.30.7");
  EXPECT_EQ(decode_version(2804).text(), "2.8.4");  // before 2.9: MAJOR*1000 + MINOR*100
  EXPECT_EQ(decode_version(2804).code(), 20804);
  EXPECT_LT(decode_version(21212).code(), kMinimumVersion);
  EXPECT_EQ(kMinimumVersion, 21400);
}

TEST(NcclAbi, DatatypeAndOpCodesMatchNcclH) {
  EXPECT_EQ(datatype_code(DType::Int8), 0);
  EXPECT_EQ(datatype_code(DType::Uint8), 1);
  EXPECT_EQ(datatype_code(DType::Int32), 2);
  EXPECT_EQ(datatype_code(DType::Uint32), 3);
  EXPECT_EQ(datatype_code(DType::Int64), 4);
  EXPECT_EQ(datatype_code(DType::Uint64), 5);
  EXPECT_EQ(datatype_code(DType::Half), 6);
  EXPECT_EQ(datatype_code(DType::Float), 7);
  EXPECT_EQ(datatype_code(DType::Double), 8);
  EXPECT_EQ(datatype_code(DType::BFloat16), 9);
  EXPECT_EQ(datatype_code(DType::Fp8E4M3), 10);
  EXPECT_EQ(datatype_code(DType::Fp8E5M2), 11);
  EXPECT_EQ(redop_code(ReduceOp::Sum), 0);
  EXPECT_EQ(redop_code(ReduceOp::Prod), 1);
  EXPECT_EQ(redop_code(ReduceOp::Max), 2);
  EXPECT_EQ(redop_code(ReduceOp::Min), 3);
  EXPECT_EQ(redop_code(ReduceOp::Avg), 4);
  EXPECT_FALSE(redop_code(ReduceOp::None).has_value());
}

TEST(NcclAbi, ResultNames) {
  EXPECT_EQ(result_name(0), "ncclSuccess");
  EXPECT_EQ(result_name(6), "ncclRemoteError");
  EXPECT_EQ(result_name(7), "ncclInProgress");
  EXPECT_EQ(result_name(8), "ncclTimeout");
  EXPECT_EQ(result_name(42), "ncclResult 42");
}

}  // namespace
}  // namespace cb::nccl
