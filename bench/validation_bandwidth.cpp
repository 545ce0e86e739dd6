// How fast the GPU validation runs against what the memory can do: the fill and check kernels of
// collectives/nccl (through the DeviceMemory the nccl backend uses) over one large buffer, next
// to a device-to-device cudaMemcpy of the same buffer and the theoretical peak from the memory
// clock and bus width. Target: the check at >= 80 % of device memory bandwidth.
//
//   validation_bandwidth [GiB per buffer, default 2] [device, default 0]
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "collectives/backends/nccl/cuda_device.hpp"
#include "collectives/validation/pattern.hpp"

int main(int argc, char** argv) {
  using Clock = std::chrono::steady_clock;
  const double gib = argc > 1 ? std::atof(argv[1]) : 2.0;
  const int device = argc > 2 ? std::atoi(argv[2]) : 0;
  if (std::string why = cb::cuda::no_device_reason(); !why.empty()) {
    std::fprintf(stderr, "validation_bandwidth: %s\n", why.c_str());
    return 77;
  }
  cudaSetDevice(device);
  int clock_khz = 0, bus_bits = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device);
  cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device);
  const double peak = 2.0 * clock_khz * 1e3 * bus_bits / 8 / 1e9;  // GB/s, double data rate

  const std::uint64_t bytes = static_cast<std::uint64_t>(gib * (1ULL << 30));
  auto memory = cb::cuda::make_device_memory({device});
  void* a = memory->allocate(bytes);
  void* b = memory->allocate(bytes);
  const int reps = 10;

  // Reference: device-to-device copy moves 2 x bytes per repetition.
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
  cudaEventRecord(start);
  for (int i = 0; i < reps; ++i) cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice);
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  const double copy = 2.0 * bytes * reps / (ms * 1e-3) / 1e9;

  std::printf("dtype,element_bytes,fill_GBps,check_GBps,check_pct_of_copy,check_pct_of_peak\n");
  for (cb::DType t : {cb::DType::Int8, cb::DType::Half, cb::DType::Float, cb::DType::Double}) {
    const std::size_t es = cb::info(t).size;
    const std::uint64_t count = bytes / es;
    cb::Pattern pattern(t, cb::ReduceOp::Sum, 8, 1);
    cb::PeriodicTable table = pattern.reduced_table();
    memory->fill(a, count, table, 0);  // warm-up
    auto t0 = Clock::now();
    for (int i = 0; i < reps; ++i) memory->fill(a, count, table, 0);
    const double fill_s = std::chrono::duration<double>(Clock::now() - t0).count();
    std::uint64_t wrong = memory->count_wrong(a, count, table, 0);
    t0 = Clock::now();
    for (int i = 0; i < reps; ++i) wrong += memory->count_wrong(a, count, table, 0);
    const double check_s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (wrong != 0) {
      std::fprintf(stderr, "validation_bandwidth: %llu wrong elements after a fill\n",
                   static_cast<unsigned long long>(wrong));
      return 1;
    }
    const double fill = bytes * reps / fill_s / 1e9, check = bytes * reps / check_s / 1e9;
    std::printf("%s,%zu,%.1f,%.1f,%.1f,%.1f\n", std::string(cb::info(t).name).c_str(), es, fill,
                check, 100 * check / copy, peak > 0 ? 100 * check / peak : 0.0);
  }
  std::printf("# device-to-device copy %.1f GB/s; theoretical peak %.1f GB/s\n", copy, peak);
  memory->release(a);
  memory->release(b);
  return 0;
}
