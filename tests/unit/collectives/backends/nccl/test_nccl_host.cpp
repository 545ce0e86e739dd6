// NCCL backend decisions that need no GPU: which devices a process drives, what an old driver
// is told, blocking or non-blocking communicators, and which set-up failures skip a case.
#include <gtest/gtest.h>

#include <cmath>

#include "collectives/backends/nccl/cuda_requirements.hpp"
#include "collectives/backends/nccl/device_selection.hpp"
#include "collectives/backends/nccl/event_stamps.hpp"
#include "collectives/backends/nccl/nccl_abi.hpp"
#include "collectives/backends/nccl/nccl_policy.hpp"
#include "common/error.hpp"

namespace cb {
namespace {

using V = std::vector<int>;

TEST(DeviceSelection, RanksTakeConsecutiveGpusOfTheNode) {
  EXPECT_EQ(cuda::choose_devices(0, 1, 8), V{0});
  EXPECT_EQ(cuda::choose_devices(3, 1, 8), V{3});
  EXPECT_EQ(cuda::choose_devices(1, 2, 8), (V{2, 3}));
}

// Slurm --gpus-per-task / --gpu-bind: every task sees only its own G GPUs.
TEST(DeviceSelection, ExactlyTheGpusOfOneTaskAreVisible) {
  EXPECT_EQ(cuda::choose_devices(5, 1, 1), V{0});
  EXPECT_EQ(cuda::choose_devices(3, 2, 2), (V{0, 1}));
  EXPECT_EQ(cuda::choose_devices(0, 4, 4), (V{0, 1, 2, 3}));
}

TEST(DeviceSelection, TooFewGpusIsARuntimeError) {
  try {
    cuda::choose_devices(2, 2, 3);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runtime);
    EXPECT_NE(std::string(e.what()).find("needs GPUs 4..5"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("3 are visible"), std::string::npos) << e.what();
  }
  EXPECT_THROW(cuda::choose_devices(1, 1, 0), Error);
}

TEST(CudaRequirements, InsufficientDriverNamesBothVersions) {
  EXPECT_EQ(cuda::version_text(12080), "12.8");
  EXPECT_EQ(cuda::version_text(13000), "13.0");
  EXPECT_EQ(cuda::required_driver(13000), 13000);
  EXPECT_EQ(cuda::required_driver(12040), 12000);  // minor-version compatibility
  const std::string why = cuda::insufficient_driver_reason(12020, 13000);
  EXPECT_NE(why.find("cudaErrorInsufficientDriver"), std::string::npos) << why;
  EXPECT_NE(why.find("the driver supports CUDA 12.2"), std::string::npos) << why;
  EXPECT_NE(why.find("needs a driver for CUDA 13.0 or newer"), std::string::npos) << why;
  EXPECT_NE(why.find("rebuild commbench with a CUDA toolkit no newer than 12.2"), std::string::npos)
      << why;
  // No driver at all gives the same CUDA error; that is "no CUDA device", not an old driver.
  EXPECT_EQ(cuda::insufficient_driver_reason(0, 13000), "");
}

TEST(NcclPolicy, CommunicatorsAreBlockingUnlessAskedOtherwise) {
  EXPECT_TRUE(nccl::blocking_communicators(nullptr));
  EXPECT_TRUE(nccl::blocking_communicators("1"));
  EXPECT_FALSE(nccl::blocking_communicators("0"));
  try {
    nccl::blocking_communicators("yes");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("COMMBENCH_NCCL_BLOCKING"), std::string::npos);
  }
}

TEST(NcclPolicy, OutOfMemoryAndSystemErrorsAreFaultsNotRejections) {
  EXPECT_TRUE(nccl::is_rejection(nccl::kInvalidUsage));
  EXPECT_TRUE(nccl::is_rejection(nccl::kInvalidArgument));
  EXPECT_TRUE(nccl::is_rejection(nccl::kInternalError));
  EXPECT_FALSE(nccl::is_rejection(nccl::kUnhandledCudaError));
  EXPECT_FALSE(nccl::is_rejection(nccl::kSystemError));
  EXPECT_FALSE(nccl::is_rejection(nccl::kRemoteError));
  EXPECT_FALSE(nccl::is_rejection(nccl::kTimeout));
}

// Lateness on NCCL: the events after each kernel put on the host clock. One GPU: the start event
// ran at host time 1000 us; kernels end 0.1, 0.2 and 1.2 ms after it. The host issued call 1 at
// 1050 us, before call 0 ended (the stream starts it at that end), and call 2 late, at 2000 us,
// after call 1 ended at 1200.
TEST(EventStamps, EntriesAreWhenTheStreamCouldStartTheKernel) {
  const double nan = std::nan("");
  auto s = cuda::stamps_from_events(1000, {{0.1, 0.2, 1.2}}, {nan, 1050, 2000});
  EXPECT_EQ(s.entry, (std::vector<double>{1000, 1100, 2000}));
  EXPECT_EQ(s.exit, (std::vector<double>{1100, 1200, 2200}));
  // Two GPUs in one process: it leaves each call, and so enters the next, with its later GPU.
  auto two = cuda::stamps_from_events(1000, {{0.1, 0.2}, {0.15, 0.18}}, {});
  EXPECT_EQ(two.entry, (std::vector<double>{1000, 1150}));
  EXPECT_EQ(two.exit, (std::vector<double>{1150, 1200}));
  EXPECT_TRUE(cuda::stamps_from_events(1000, {}, {}).entry.empty());
}

}  // namespace
}  // namespace cb
