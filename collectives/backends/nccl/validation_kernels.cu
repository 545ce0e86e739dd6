#include "collectives/backends/nccl/validation_kernels.hpp"

#include <algorithm>

namespace cb::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kVectorBytes = 16;

// The table's two periods, copied into shared memory by every block.
template <typename T>
__device__ const T* load_table(const T* table, std::uint32_t period) {
  extern __shared__ __align__(16) unsigned char shared[];
  T* s = reinterpret_cast<T*>(shared);
  for (std::uint32_t k = threadIdx.x; k < 2 * period; k += blockDim.x) s[k] = table[k];
  __syncthreads();
  return s;
}

// The buffer is walked as: a head of scalar elements up to the first 16-byte boundary, a body of
// 16-byte vectors, and a tail of fewer than one vector's elements.
struct Split {
  std::uint64_t head, vectors, tail_start;
};

template <typename T>
__device__ Split split(const void* p, std::uint64_t count) {
  constexpr std::uint64_t V = kVectorBytes / sizeof(T);
  std::uint64_t misaligned = (reinterpret_cast<std::uintptr_t>(p) % kVectorBytes) / sizeof(T);
  std::uint64_t head = misaligned ? min(count, V - misaligned) : 0;
  std::uint64_t vectors = (count - head) / V;
  return {head, vectors, head + vectors * V};
}

template <typename T>
union Vector {
  uint4 raw;
  T e[kVectorBytes / sizeof(T)];
};

// The 16 table bytes from `byte_offset` on, read as five aligned words and funnel-shifted: far
// fewer shared-memory accesses than one per element for 1- and 2-byte types.
__device__ uint4 table_vector(const void* table, std::uint32_t byte_offset) {
  const std::uint32_t* w = static_cast<const std::uint32_t*>(table) + (byte_offset >> 2);
  const std::uint32_t shift = (byte_offset & 3) * 8;
  const std::uint32_t w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4];
  return make_uint4(__funnelshift_r(w0, w1, shift), __funnelshift_r(w1, w2, shift),
                    __funnelshift_r(w2, w3, shift), __funnelshift_r(w3, w4, shift));
}

template <typename T>
__global__ void fill_kernel(T* dst, std::uint64_t count, const T* table, std::uint32_t period,
                            std::uint32_t start) {
  constexpr std::uint32_t V = kVectorBytes / sizeof(T);
  const T* s = load_table(table, period);
  const Split sp = split<T>(dst, count);
  const std::uint64_t tid = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  const std::uint64_t threads = gridDim.x * static_cast<std::uint64_t>(blockDim.x);
  if (tid < sp.head) dst[tid] = s[(start + tid) % period];
  if (sp.tail_start + tid < count) {
    dst[sp.tail_start + tid] = s[(start + sp.tail_start + tid) % period];
  }
  // k tracks (start + element) % period without a 64-bit division per vector.
  const std::uint32_t step = static_cast<std::uint32_t>((threads * V) % period);
  std::uint32_t k = static_cast<std::uint32_t>((start + sp.head + tid * V) % period);
  uint4* out = reinterpret_cast<uint4*>(dst + sp.head);
  for (std::uint64_t j = tid; j < sp.vectors; j += threads) {
    out[j] = table_vector(s, k * sizeof(T));  // k < period: the 16 bytes lie in the 2 periods
    k += step;
    if (k >= period) k -= period;
  }
}

template <typename T>
__global__ void count_kernel(const T* buf, std::uint64_t count, const T* table,
                             std::uint32_t period, std::uint32_t start,
                             unsigned long long* counter) {
  constexpr std::uint32_t V = kVectorBytes / sizeof(T);
  const T* s = load_table(table, period);
  const Split sp = split<T>(buf, count);
  const std::uint64_t tid = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  const std::uint64_t threads = gridDim.x * static_cast<std::uint64_t>(blockDim.x);
  unsigned long long wrong = 0;
  if (tid < sp.head) wrong += buf[tid] != s[(start + tid) % period];
  if (sp.tail_start + tid < count) {
    wrong += buf[sp.tail_start + tid] != s[(start + sp.tail_start + tid) % period];
  }
  const std::uint32_t step = static_cast<std::uint32_t>((threads * V) % period);
  std::uint32_t k = static_cast<std::uint32_t>((start + sp.head + tid * V) % period);
  const uint4* in = reinterpret_cast<const uint4*>(buf + sp.head);
  for (std::uint64_t j = tid; j < sp.vectors; j += threads) {
    Vector<T> got, want;
    got.raw = in[j];
    want.raw = table_vector(s, k * sizeof(T));
    if (got.raw.x != want.raw.x || got.raw.y != want.raw.y || got.raw.z != want.raw.z ||
        got.raw.w != want.raw.w) {
#pragma unroll
      for (std::uint32_t q = 0; q < V; ++q) wrong += got.e[q] != want.e[q];
    }
    k += step;
    if (k >= period) k -= period;
  }
  // One atomic per warp.
  for (int offset = 16; offset > 0; offset /= 2)
    wrong += __shfl_down_sync(0xffffffffu, wrong, offset);
  if ((threadIdx.x & 31) == 0 && wrong) atomicAdd(counter, wrong);
}

// Enough blocks to fill the device a few times over; the grid-stride loop covers the rest.
int blocks_for(std::uint64_t count, std::size_t element_size) {
  static thread_local int cached_device = -1, sms = 0;
  int device = 0;
  cudaGetDevice(&device);
  if (device != cached_device) {
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    cached_device = device;
  }
  const std::uint64_t per_thread = kVectorBytes / element_size;
  const std::uint64_t needed = (count / per_thread + kThreads - 1) / kThreads + 1;
  return static_cast<int>(std::min<std::uint64_t>(needed, std::max(sms, 1) * 8ULL));
}

template <typename T>
void fill_as(void* dst, std::uint64_t count, const void* table, std::uint32_t period,
             std::uint32_t start, cudaStream_t stream) {
  const std::size_t shared = 2 * period * sizeof(T) + 16;
  fill_kernel<T><<<blocks_for(count, sizeof(T)), kThreads, shared, stream>>>(
      static_cast<T*>(dst), count, static_cast<const T*>(table), period, start);
}

template <typename T>
void count_as(const void* buf, std::uint64_t count, const void* table, std::uint32_t period,
              std::uint32_t start, unsigned long long* counter, cudaStream_t stream) {
  const std::size_t shared = 2 * period * sizeof(T) + 16;
  count_kernel<T><<<blocks_for(count, sizeof(T)), kThreads, shared, stream>>>(
      static_cast<const T*>(buf), count, static_cast<const T*>(table), period, start, counter);
}

}  // namespace

void launch_fill(void* dst, std::uint64_t count, const void* table, std::size_t element_size,
                 std::uint32_t period, std::uint32_t start, cudaStream_t stream) {
  if (count == 0) return;
  switch (element_size) {
    case 1:
      fill_as<std::uint8_t>(dst, count, table, period, start, stream);
      break;
    case 2:
      fill_as<std::uint16_t>(dst, count, table, period, start, stream);
      break;
    case 4:
      fill_as<std::uint32_t>(dst, count, table, period, start, stream);
      break;
    case 8:
      fill_as<std::uint64_t>(dst, count, table, period, start, stream);
      break;
  }
}

void launch_count_wrong(const void* buf, std::uint64_t count, const void* table,
                        std::size_t element_size, std::uint32_t period, std::uint32_t start,
                        unsigned long long* counter, cudaStream_t stream) {
  if (count == 0) return;
  switch (element_size) {
    case 1:
      count_as<std::uint8_t>(buf, count, table, period, start, counter, stream);
      break;
    case 2:
      count_as<std::uint16_t>(buf, count, table, period, start, counter, stream);
      break;
    case 4:
      count_as<std::uint32_t>(buf, count, table, period, start, counter, stream);
      break;
    case 8:
      count_as<std::uint64_t>(buf, count, table, period, start, counter, stream);
      break;
  }
}

}  // namespace cb::cuda
