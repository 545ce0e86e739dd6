// The rule for what runs without -B, on facts given by hand (a GPU machine included: this
// machine has none, so the facts stand in for one).
#include <gtest/gtest.h>

#include "collectives/backends/registry.hpp"

namespace cb {
namespace {

using Names = std::vector<std::string>;

DefaultFacts gpu_machine() {
  DefaultFacts f;
  f.cpu_backends = {"mpi", "gloo"};
  return f;
}

TEST(DefaultBackends, WithoutAGpuEveryCpuBackendSideBySide) {
  DefaultFacts f = gpu_machine();
  f.nccl_unavailable = "no CUDA device is visible";
  BackendChoice c = choose_default_backends(f);
  EXPECT_EQ(c.names, (Names{"mpi", "gloo"}));
  EXPECT_FALSE(c.device_memory);
  EXPECT_NE(c.why.find("nccl: no CUDA device is visible"), std::string::npos) << c.why;
}

TEST(DefaultBackends, LocalLauncherRanksRunGlooOnly) {
  DefaultFacts f = gpu_machine();
  f.nccl_unavailable = "no CUDA device is visible";
  f.mpi_can_start = false;
  EXPECT_EQ(choose_default_backends(f).names, Names{"gloo"});
}

TEST(DefaultBackends, GpuWithCudaAwareMpiPutsMpiBesideNcclOnDeviceMemory) {
  DefaultFacts f = gpu_machine();
  f.mpi_cuda_aware = true;
  f.mpi_cuda_how = "MPIX_Query_cuda_support() = 1";
  BackendChoice c = choose_default_backends(f);
  EXPECT_EQ(c.names, (Names{"nccl", "mpi"}));
  EXPECT_TRUE(c.device_memory);
  EXPECT_NE(c.why.find("MPIX_Query_cuda_support() = 1"), std::string::npos) << c.why;
}

TEST(DefaultBackends, GpuWithoutCudaAwareMpiRunsNcclAloneAndSaysWhy) {
  DefaultFacts f = gpu_machine();
  f.mpi_cuda_how = "Open MPI built without CUDA support";
  BackendChoice c = choose_default_backends(f);
  EXPECT_EQ(c.names, Names{"nccl"});
  EXPECT_FALSE(c.device_memory);
  EXPECT_NE(c.why.find("not CUDA-aware (Open MPI built without CUDA support)"), std::string::npos)
      << c.why;
}

TEST(DefaultBackends, GpuUnderTheLocalLauncherRunsNcclAlone) {
  DefaultFacts f = gpu_machine();
  f.mpi_can_start = false;
  f.mpi_cuda_aware = true;  // never asked there; even if it were, mpi cannot start
  BackendChoice c = choose_default_backends(f);
  EXPECT_EQ(c.names, Names{"nccl"});
  EXPECT_FALSE(c.device_memory);
}

}  // namespace
}  // namespace cb
