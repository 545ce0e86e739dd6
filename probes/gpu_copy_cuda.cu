// Copy-engine bandwidth with the CUDA runtime. Method as nvbandwidth's: a spin kernel holds the
// stream while the start event and the copies are queued, so queueing costs are not timed;
// pageable copies cannot be queued behind it (the runtime stages them synchronously) and are
// timed on the host instead. Pinned host buffers are allocated by a thread running on the
// GPU's local CPUs so that they sit on its NUMA node.
#include <cuda_runtime.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "probes/gpu_copy.hpp"

namespace cb {

namespace {

__global__ void spin_until_released(volatile int* flag, unsigned long long max_cycles) {
  unsigned long long start = clock64();
  while (*flag == 0 && clock64() - start < max_cycles) {
  }
}

struct CudaFailure {
  std::string what;
};

void check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) throw CudaFailure{std::string(what) + ": " + cudaGetErrorString(rc)};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Runs the calling thread on the CPUs sysfs lists for the GPU while it is alive.
class NearGpu {
 public:
  explicit NearGpu(const std::string& bdf) {
    have_ = sched_getaffinity(0, sizeof saved_, &saved_) == 0;
    std::ifstream in("/sys/bus/pci/devices/" + bdf + "/local_cpulist");
    std::string list;
    if (!have_ || !(in >> list)) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    std::size_t at = 0;
    while (at < list.size()) {
      std::size_t end = list.find(',', at);
      if (end == std::string::npos) end = list.size();
      std::string item = list.substr(at, end - at);
      std::size_t dash = item.find('-');
      int lo = std::atoi(item.c_str());
      int hi = dash == std::string::npos ? lo : std::atoi(item.c_str() + dash + 1);
      for (int c = lo; c <= hi && c < CPU_SETSIZE; ++c) CPU_SET(c, &set);
      at = end + 1;
    }
    CPU_AND(&set, &set, &saved_);
    if (CPU_COUNT(&set) > 0) sched_setaffinity(0, sizeof set, &set);
  }
  ~NearGpu() {
    if (have_) sched_setaffinity(0, sizeof saved_, &saved_);
  }

 private:
  cpu_set_t saved_;
  bool have_ = false;
};

class Measurer {
 public:
  explicit Measurer(const GpuCopyOptions& o) : o_(o) {
    void* p = nullptr;
    check(cudaHostAlloc(&p, sizeof(int), cudaHostAllocPortable | cudaHostAllocMapped),
          "cudaHostAlloc (flag)");
    flag_ = static_cast<volatile int*>(p);
  }
  ~Measurer() { cudaFreeHost(const_cast<int*>(flag_)); }

  // GB/s of `copy` queued on `stream` of the current device behind the spin kernel.
  template <typename Copy>
  double queued(cudaStream_t stream, Copy copy) {
    cudaEvent_t start, stop;
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
    std::vector<double> seconds;
    copy();  // warm-up: first-touch mappings, peer mappings
    check(cudaStreamSynchronize(stream), "warm-up copy");
    for (int r = 0; r < o_.repeats; ++r) {
      *flag_ = 0;
      spin_until_released<<<1, 1, 0, stream>>>(flag_, 20ULL * 1000 * 1000 * 1000);
      check(cudaGetLastError(), "spin kernel launch");
      check(cudaEventRecord(start, stream), "cudaEventRecord");
      copy();
      check(cudaEventRecord(stop, stream), "cudaEventRecord");
      *flag_ = 1;
      check(cudaStreamSynchronize(stream), "copy");
      float ms = 0;
      check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
      seconds.push_back(ms / 1e3);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return static_cast<double>(o_.bytes) / median(seconds) / 1e9;
  }

  // GB/s of a synchronous copy timed on the host (pageable memory).
  template <typename Copy>
  double synchronous(Copy copy) {
    copy();
    std::vector<double> seconds;
    for (int r = 0; r < o_.repeats; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      copy();
      auto t1 = std::chrono::steady_clock::now();
      seconds.push_back(std::chrono::duration<double>(t1 - t0).count());
    }
    return static_cast<double>(o_.bytes) / median(seconds) / 1e9;
  }

 private:
  const GpuCopyOptions& o_;
  volatile int* flag_ = nullptr;
};

void measure_device(const GpuCopyOptions& o, Measurer& m, GpuCopyDevice& d) {
  check(cudaSetDevice(d.index), "cudaSetDevice");
  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  void *dev_a = nullptr, *dev_b = nullptr;
  check(cudaMalloc(&dev_a, o.bytes), "cudaMalloc");
  check(cudaMalloc(&dev_b, o.bytes), "cudaMalloc");
  if (o.host) {
    NearGpu near(d.bdf);
    void* pinned = nullptr;
    check(cudaHostAlloc(&pinned, o.bytes, cudaHostAllocPortable), "cudaHostAlloc");
    std::memset(pinned, 1, o.bytes);
    void* pageable = std::malloc(o.bytes);
    if (!pageable) throw CudaFailure{"out of host memory for the pageable buffer"};
    std::memset(pageable, 1, o.bytes);
    d.h2d_pinned = m.queued(stream, [&] {
      check(cudaMemcpyAsync(dev_a, pinned, o.bytes, cudaMemcpyHostToDevice, stream), "H2D");
    });
    d.d2h_pinned = m.queued(stream, [&] {
      check(cudaMemcpyAsync(pinned, dev_a, o.bytes, cudaMemcpyDeviceToHost, stream), "D2H");
    });
    d.h2d_pageable = m.synchronous([&] {
      check(cudaMemcpy(dev_a, pageable, o.bytes, cudaMemcpyHostToDevice), "H2D pageable");
    });
    d.d2h_pageable = m.synchronous([&] {
      check(cudaMemcpy(pageable, dev_a, o.bytes, cudaMemcpyDeviceToHost), "D2H pageable");
    });
    std::free(pageable);
    cudaFreeHost(pinned);
  }
  if (o.device) {
    d.d2d = m.queued(stream, [&] {
      check(cudaMemcpyAsync(dev_b, dev_a, o.bytes, cudaMemcpyDeviceToDevice, stream), "D2D");
    });
  }
  cudaFree(dev_a);
  cudaFree(dev_b);
  cudaStreamDestroy(stream);
}

void measure_peers(const GpuCopyOptions& o, Measurer& m, GpuCopyResult& r) {
  int n = static_cast<int>(r.devices.size());
  r.p2p.assign(n, std::vector<std::optional<double>>(n));
  std::vector<void*> buf(n, nullptr);
  for (int i = 0; i < n; ++i) {
    check(cudaSetDevice(i), "cudaSetDevice");
    check(cudaMalloc(&buf[i], o.bytes), "cudaMalloc");
  }
  for (int src = 0; src < n; ++src) {
    for (int dst = 0; dst < n; ++dst) {
      if (src == dst) continue;
      int can = 0;
      check(cudaDeviceCanAccessPeer(&can, src, dst), "cudaDeviceCanAccessPeer");
      if (!can) continue;  // no P2P path: reported as N/A rather than a copy through the host
      check(cudaSetDevice(src), "cudaSetDevice");
      cudaError_t rc = cudaDeviceEnablePeerAccess(dst, 0);
      if (rc == cudaErrorPeerAccessAlreadyEnabled) {
        cudaGetLastError();
      } else {
        check(rc, "cudaDeviceEnablePeerAccess");
      }
      cudaStream_t stream;
      check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
      r.p2p[src][dst] = m.queued(stream, [&] {
        check(cudaMemcpyPeerAsync(buf[dst], dst, buf[src], src, o.bytes, stream), "P2P copy");
      });
      cudaStreamDestroy(stream);
    }
  }
  for (int i = 0; i < n; ++i) {
    cudaSetDevice(i);
    cudaFree(buf[i]);
  }
}

}  // namespace

GpuCopyResult run_gpu_copy(const GpuCopyOptions& o) {
  GpuCopyResult r;
  int count = 0;
  cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess || count == 0) {
    r.error = "no CUDA device is visible";
    if (rc != cudaSuccess)
      r.error += std::string(" (cudaGetDeviceCount: ") + cudaGetErrorString(rc) + ")";
    return r;
  }
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  r.runtime = "CUDA runtime " + std::to_string(runtime / 1000) + "." +
              std::to_string(runtime % 1000 / 10) + ", driver " + std::to_string(driver / 1000) +
              "." + std::to_string(driver % 1000 / 10);
  try {
    for (int i = 0; i < count; ++i) {
      GpuCopyDevice d;
      d.index = i;
      cudaDeviceProp prop;
      check(cudaGetDeviceProperties(&prop, i), "cudaGetDeviceProperties");
      d.name = prop.name;
      char bus[32] = {};
      if (cudaDeviceGetPCIBusId(bus, sizeof bus, i) == cudaSuccess) {
        d.bdf = bus;
        for (auto& c : d.bdf) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      }
      r.devices.push_back(d);
    }
    Measurer m(o);
    for (auto& d : r.devices) measure_device(o, m, d);
    if (o.peer && count > 1) measure_peers(o, m, r);
  } catch (const CudaFailure& f) {
    r.error = f.what;
  }
  return r;
}

}  // namespace cb
