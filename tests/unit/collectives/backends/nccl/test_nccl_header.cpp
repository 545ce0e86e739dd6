// The hand-written ABI (collectives/backends/nccl/nccl_abi.hpp) against the nccl.h this machine's CUDA
// toolkit ships: every field the header has sits at the same offset, the header's sizeof is
// what make_config() sends for that release, and the enum values agree. Only this test includes
// nccl.h; the loader never does.
#include <gtest/gtest.h>
#include <nccl.h>

#include <cstddef>

#include "collectives/backends/nccl/nccl_abi.hpp"

namespace cb::nccl {
namespace {

#define EXPECT_SAME_OFFSET(field) \
  EXPECT_EQ(offsetof(ncclConfig_t, field), offsetof(Config, field)) << #field

TEST(NcclHeader, ConfigFieldsSitWhereTheHeaderPutsThem) {
  EXPECT_SAME_OFFSET(size);
  EXPECT_SAME_OFFSET(magic);
  EXPECT_SAME_OFFSET(version);
  EXPECT_SAME_OFFSET(blocking);
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 17, 0)
  EXPECT_SAME_OFFSET(cgaClusterSize);
  EXPECT_SAME_OFFSET(minCTAs);
  EXPECT_SAME_OFFSET(maxCTAs);
  EXPECT_SAME_OFFSET(netName);
#endif
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 18, 0)
  EXPECT_SAME_OFFSET(splitShare);
#endif
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 26, 0)
  EXPECT_SAME_OFFSET(trafficClass);
#endif
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
  EXPECT_SAME_OFFSET(commName);
  EXPECT_SAME_OFFSET(collnetEnable);
  EXPECT_SAME_OFFSET(CTAPolicy);
  EXPECT_SAME_OFFSET(shrinkShare);
  EXPECT_SAME_OFFSET(nvlsCTAs);
#endif
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
  EXPECT_SAME_OFFSET(nChannelsPerNetPeer);
  EXPECT_SAME_OFFSET(nvlinkCentricSched);
#endif
  EXPECT_EQ(sizeof(ncclConfig_t), config_size_for(NCCL_VERSION_CODE));
}

TEST(NcclHeader, MakeConfigEqualsTheInitializer) {
  ncclConfig_t theirs = NCCL_CONFIG_INITIALIZER;
  theirs.blocking = 0;
  Config ours = make_config(NCCL_VERSION_CODE, false);
  EXPECT_EQ(std::memcmp(&theirs, &ours, sizeof theirs), 0);
}

TEST(NcclHeader, EnumValuesAgree) {
  EXPECT_EQ(static_cast<int>(ncclInProgress), kInProgress);
  EXPECT_EQ(static_cast<int>(ncclRemoteError), kRemoteError);
  EXPECT_EQ(datatype_code(DType::Half), static_cast<int>(ncclHalf));
  EXPECT_EQ(datatype_code(DType::Double), static_cast<int>(ncclDouble));
  EXPECT_EQ(datatype_code(DType::BFloat16), static_cast<int>(ncclBfloat16));
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 24, 0)
  EXPECT_EQ(datatype_code(DType::Fp8E4M3), static_cast<int>(ncclFloat8e4m3));
  EXPECT_EQ(datatype_code(DType::Fp8E5M2), static_cast<int>(ncclFloat8e5m2));
#endif
  EXPECT_EQ(redop_code(ReduceOp::Min), static_cast<int>(ncclMin));
  EXPECT_EQ(redop_code(ReduceOp::Avg), static_cast<int>(ncclAvg));
  EXPECT_EQ(kConfigUndefInt, NCCL_CONFIG_UNDEF_INT);
  EXPECT_EQ(sizeof(ncclUniqueId), sizeof(UniqueId));
}

}  // namespace
}  // namespace cb::nccl
