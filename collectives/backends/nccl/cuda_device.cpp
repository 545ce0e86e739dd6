#include "collectives/backends/nccl/cuda_device.hpp"

#include <fmt/format.h>

#include <cstring>
#include <map>

#include "collectives/backends/nccl/cuda_check.hpp"
#include "collectives/backends/nccl/cuda_requirements.hpp"
#include "collectives/backends/nccl/device_selection.hpp"
#include "collectives/backends/nccl/validation_kernels.hpp"
#include "common/error.hpp"
#include "common/units.hpp"

namespace cb::cuda {

std::string error_text(cudaError_t e) {
  return fmt::format("{} ({})", cudaGetErrorString(e), cudaGetErrorName(e));
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) runtime_error("{} failed: {}", what, error_text(e));
}

DeviceScope::DeviceScope(int device) {
  // Never throws (it runs in destructors); a failure shows up in the next call on the device.
  if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
  if (previous_ != device) cudaSetDevice(device);
}

DeviceScope::~DeviceScope() {
  if (previous_ >= 0) cudaSetDevice(previous_);
}

bool built_with_cuda() {
  return true;
}

std::string no_device_reason() {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e == cudaErrorInsufficientDriver) {  // also what a machine without any driver says
    cudaGetLastError();
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    if (std::string why = insufficient_driver_reason(driver, runtime); !why.empty()) return why;
  }
  if (e != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error for later calls
    return fmt::format("no CUDA device is visible (cudaGetDeviceCount: {})", error_text(e));
  }
  if (n == 0) return "no CUDA device is visible (cudaGetDeviceCount found 0)";
  return "";
}

std::vector<int> devices_for(int local_rank, int count) {
  if (std::string why = no_device_reason(); !why.empty()) runtime_error("{}", why);
  int n = 0;
  check(cudaGetDeviceCount(&n), "cudaGetDeviceCount");
  return choose_devices(local_rank, count, n);
}

std::string summary() {
  int runtime = 0, driver = 0, n = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  std::string s =
      fmt::format("runtime {}.{} (linked statically)", runtime / 1000, runtime % 1000 / 10);
  s += driver ? fmt::format(", driver {}.{}", driver / 1000, driver % 1000 / 10) : ", no driver";
  if (std::string why = no_device_reason(); !why.empty()) return s + ", " + why;
  cudaGetDeviceCount(&n);
  s += fmt::format(", {} device{}", n, n == 1 ? "" : "s");
  for (int d = 0; d < n; ++d) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, d) == cudaSuccess) {
      s += fmt::format("{} {} (compute capability {}.{})", d == 0 ? ":" : ",", p.name, p.major,
                       p.minor);
    }
  }
  return s;
}

int compute_major(int device) {
  int major = 0;
  check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
        "cudaDeviceGetAttribute");
  return major;
}

namespace {

// Per-device helpers for fill and check: a stream, the table and a counter on the device.
struct Lane {
  int device = 0;
  cudaStream_t stream = nullptr;
  void* table = nullptr;  // 2 x period elements of up to 8 bytes
  std::size_t table_bytes = 0;
  unsigned long long* counter = nullptr;
};

class DeviceMemoryImpl : public DeviceMemory {
 public:
  explicit DeviceMemoryImpl(std::vector<int> devices) : devices_(std::move(devices)) {
    for (int d : devices_) {
      DeviceScope scope(d);
      Lane lane;
      lane.device = d;
      check(cudaStreamCreateWithFlags(&lane.stream, cudaStreamNonBlocking), "cudaStreamCreate");
      check(cudaMalloc(reinterpret_cast<void**>(&lane.counter), sizeof(unsigned long long)),
            "cudaMalloc (validation counter)");
      lanes_.push_back(lane);
    }
  }
  ~DeviceMemoryImpl() override {
    for (auto& [base, a] : allocations_) free_all(a);
    for (auto& lane : lanes_) {
      DeviceScope scope(lane.device);
      cudaFree(lane.table);
      cudaFree(lane.counter);
      cudaStreamDestroy(lane.stream);
    }
  }

  MemoryKind kind() const override { return MemoryKind::Device; }
  const std::vector<int>& devices() const override { return devices_; }

  void* allocate(std::uint64_t bytes) override {
    if (bytes == 0) return nullptr;
    Allocation a;
    a.bytes = bytes;
    for (int d : devices_) {
      DeviceScope scope(d);
      void* p = nullptr;
      cudaError_t e = cudaMalloc(&p, bytes);
      if (e != cudaSuccess) {
        cudaGetLastError();
        free_all(a);
        usage_error("cannot allocate a {} buffer on GPU {}: {}; use a smaller --max-bytes",
                    format_size(bytes), d, error_text(e));
      }
      a.bases.push_back(p);
      check(cudaMemset(p, 0, bytes), "cudaMemset");  // first touch outside timed regions
    }
    allocations_[a.bases.front()] = a;
    return a.bases.front();
  }

  void release(void* p) override {
    auto it = allocations_.find(p);
    if (it == allocations_.end()) return;
    free_all(it->second);
    allocations_.erase(it);
  }

  void* mirror(const void* p, int l) const override {
    if (!p || l == 0) return const_cast<void*>(p);
    const auto* a = containing(p, 0);
    if (!a) runtime_error("internal: {} is not in a device buffer", p);
    return static_cast<char*>(a->bases[static_cast<std::size_t>(l)]) +
           (static_cast<const char*>(p) - static_cast<const char*>(a->bases.front()));
  }

  void fill(void* dst, std::uint64_t count, const PeriodicTable& t,
            std::uint64_t src_offset) override {
    if (count == 0) return;
    Lane& lane = lane_of(dst);
    DeviceScope scope(lane.device);
    upload(lane, t);
    launch_fill(dst, count, lane.table, t.element_size, static_cast<std::uint32_t>(t.period),
                static_cast<std::uint32_t>(src_offset % t.period), lane.stream);
    finish(lane, "validation fill kernel");
  }

  void poison(void* dst, std::uint64_t bytes) override {
    if (bytes == 0) return;
    Lane& lane = lane_of(dst);
    DeviceScope scope(lane.device);
    check(cudaMemsetAsync(dst, kUnwrittenMarker, bytes, lane.stream), "cudaMemsetAsync");
    finish(lane, "cudaMemsetAsync");
  }

  std::uint64_t count_wrong(const void* buf, std::uint64_t count, const PeriodicTable& t,
                            std::uint64_t src_offset) override {
    if (count == 0) return 0;
    Lane& lane = lane_of(buf);
    DeviceScope scope(lane.device);
    upload(lane, t);
    check(cudaMemsetAsync(lane.counter, 0, sizeof(unsigned long long), lane.stream),
          "cudaMemsetAsync");
    launch_count_wrong(buf, count, lane.table, t.element_size, static_cast<std::uint32_t>(t.period),
                       static_cast<std::uint32_t>(src_offset % t.period), lane.counter,
                       lane.stream);
    unsigned long long wrong = 0;
    check(cudaMemcpyAsync(&wrong, lane.counter, sizeof wrong, cudaMemcpyDeviceToHost, lane.stream),
          "cudaMemcpyAsync");
    finish(lane, "validation check kernel");
    return wrong;
  }

  void corrupt(void* buf, std::uint64_t element_size) override {
    Lane& lane = lane_of(buf);
    DeviceScope scope(lane.device);
    unsigned char bytes[16];
    check(cudaMemcpy(bytes, buf, element_size, cudaMemcpyDeviceToHost), "cudaMemcpy");
    for (std::uint64_t i = 0; i < element_size; ++i) bytes[i] ^= 0x5A;
    check(cudaMemcpy(buf, bytes, element_size, cudaMemcpyHostToDevice), "cudaMemcpy");
  }

 private:
  struct Allocation {
    std::uint64_t bytes = 0;
    std::vector<void*> bases;  // one per device, in devices_ order
  };

  void free_all(Allocation& a) {
    for (std::size_t i = 0; i < a.bases.size(); ++i) {
      DeviceScope scope(devices_[i]);
      cudaFree(a.bases[i]);
    }
    a.bases.clear();
  }

  // The allocation whose copy on local device `l` contains p.
  const Allocation* containing(const void* p, std::size_t l) const {
    const char* c = static_cast<const char*>(p);
    for (const auto& [base, a] : allocations_) {
      const char* b = static_cast<const char*>(a.bases[l]);
      if (c >= b && c < b + a.bytes) return &a;
    }
    return nullptr;
  }

  Lane& lane_of(const void* p) {
    for (std::size_t l = 0; l < devices_.size(); ++l) {
      if (containing(p, l)) return lanes_[l];
    }
    runtime_error("internal: {} is not in a device buffer", p);
  }

  void upload(Lane& lane, const PeriodicTable& t) {
    if (t.period < 16 || t.period > (1u << 20)) {
      runtime_error("internal: validation period {} out of range", t.period);
    }
    const std::size_t bytes = 2 * t.period * t.element_size;
    if (bytes > lane.table_bytes) {
      cudaFree(lane.table);
      lane.table = nullptr;
      check(cudaMalloc(&lane.table, bytes), "cudaMalloc (validation table)");
      lane.table_bytes = bytes;
    }
    check(cudaMemcpyAsync(lane.table, t.data, bytes, cudaMemcpyHostToDevice, lane.stream),
          "cudaMemcpyAsync");
  }

  void finish(Lane& lane, const char* what) {
    check(cudaGetLastError(), what);
    check(cudaStreamSynchronize(lane.stream), what);
  }

  std::vector<int> devices_;
  std::vector<Lane> lanes_;
  std::map<void*, Allocation> allocations_;
};

}  // namespace

std::unique_ptr<DeviceMemory> make_device_memory(std::vector<int> devices) {
  return std::make_unique<DeviceMemoryImpl>(std::move(devices));
}

}  // namespace cb::cuda
