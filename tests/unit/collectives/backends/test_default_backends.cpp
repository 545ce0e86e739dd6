// The rule for what runs without -B, on facts given by hand (a GPU machine included: this
// machine has none, so the facts stand in for one).
#include <gtest/gtest.h>

#include "collectives/backends/registry.hpp"

namespace cb {
namespace {

using Names = std::vector<std::string>;

// The registry's backends as the rule sees them: mpi (needs the MPI launcher, may move GPU
// memory), gloo, nccl (the GPU backend, here able to run).
DefaultFacts gpu_machine() {
  DefaultFacts f;
  f.backends = {{"mpi", false, "the MPI", "", true, true, {}},
                {"gloo", false, "Gloo", "", false, false, {}},
                {"nccl", true, "NCCL", "", false, false, {}}};
  return f;
}

BackendFacts& nccl(DefaultFacts& f) {
  return f.backends[2];
}

DeviceSupport& mpi_device(DefaultFacts& f) {
  return f.backends[0].device;
}

TEST(DefaultBackends, WithoutAGpuEveryCpuBackendSideBySide) {
  DefaultFacts f = gpu_machine();
  nccl(f).unavailable = "no CUDA device is visible";
  BackendChoice c = choose_default_backends(f);
  EXPECT_EQ(c.names, (Names{"mpi", "gloo"}));
  EXPECT_FALSE(c.device_memory);
  EXPECT_NE(c.why.find("nccl: no CUDA device is visible"), std::string::npos) << c.why;
}

TEST(DefaultBackends, AnotherRegisteredCpuBackendJoinsTheSideBySideRun) {
  DefaultFacts f = gpu_machine();
  nccl(f).unavailable = "no CUDA device is visible";
  f.backends.push_back({"demo", false, "Demo", "", false, false, {}});
  EXPECT_EQ(choose_default_backends(f).names, (Names{"mpi", "gloo", "demo"}));
}

TEST(DefaultBackends, LocalLauncherRanksRunGlooOnly) {
  DefaultFacts f = gpu_machine();
  nccl(f).unavailable = "no CUDA device is visible";
  f.mpi_can_start = false;
  EXPECT_EQ(choose_default_backends(f).names, Names{"gloo"});
}

TEST(DefaultBackends, GpuWithCudaAwareMpiPutsMpiBesideNcclOnDeviceMemory) {
  DefaultFacts f = gpu_machine();
  mpi_device(f) = {true, "MPIX_Query_cuda_support() = 1"};
  BackendChoice c = choose_default_backends(f);
  EXPECT_EQ(c.names, (Names{"nccl", "mpi"}));
  EXPECT_TRUE(c.device_memory);
  EXPECT_NE(c.why.find("MPIX_Query_cuda_support() = 1"), std::string::npos) << c.why;
}

TEST(DefaultBackends, GpuWithoutCudaAwareMpiRunsNcclAloneAndSaysWhy) {
  DefaultFacts f = gpu_machine();
  mpi_device(f).how = "Open MPI built without CUDA support";
  BackendChoice c = choose_default_backends(f);
  EXPECT_EQ(c.names, Names{"nccl"});
  EXPECT_FALSE(c.device_memory);
  EXPECT_NE(c.why.find("not CUDA-aware (Open MPI built without CUDA support)"), std::string::npos)
      << c.why;
}

TEST(DefaultBackends, GpuUnderTheLocalLauncherRunsNcclAlone) {
  DefaultFacts f = gpu_machine();
  f.mpi_can_start = false;
  mpi_device(f).supported = true;  // never asked there; even if it were, mpi cannot start
  BackendChoice c = choose_default_backends(f);
  EXPECT_EQ(c.names, Names{"nccl"});
  EXPECT_FALSE(c.device_memory);
}

}  // namespace
}  // namespace cb
