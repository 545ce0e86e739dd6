#include "collectives/backends/nccl/spin_kernel.hpp"

namespace cb::cuda {

namespace {

constexpr int kSpinThreads = 128;

__device__ std::uint64_t global_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Each block spins from its own start: a block that started late, behind another kernel's,
// still spins its whole time, so contention shows as a longer compute.
__global__ void spin_kernel(std::uint64_t ns) {
  __shared__ std::uint64_t start;
  if (threadIdx.x == 0) start = global_ns();
  __syncthreads();
  while (global_ns() - start < ns) {
  }
}

}  // namespace

void launch_spin(std::uint64_t ns, int blocks, cudaStream_t stream) {
  spin_kernel<<<blocks, kSpinThreads, 0, stream>>>(ns);
}

}  // namespace cb::cuda
