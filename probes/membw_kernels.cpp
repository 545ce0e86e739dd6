#include "probes/membw_kernels.hpp"

#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace cb {

namespace {

#if defined(__x86_64__)

__attribute__((target("avx512f"))) std::uint64_t read_avx512(const void* src, std::size_t bytes) {
  const __m512i* p = static_cast<const __m512i*>(src);
  __m512i a = _mm512_setzero_si512(), b = a, c = a, d = a;
  for (std::size_t i = 0, n = bytes / 64; i < n; i += 4) {
    a = _mm512_xor_si512(a, _mm512_load_si512(p + i));
    b = _mm512_xor_si512(b, _mm512_load_si512(p + i + 1));
    c = _mm512_xor_si512(c, _mm512_load_si512(p + i + 2));
    d = _mm512_xor_si512(d, _mm512_load_si512(p + i + 3));
  }
  __m512i x = _mm512_xor_si512(_mm512_xor_si512(a, b), _mm512_xor_si512(c, d));
  alignas(64) std::uint64_t lanes[8];
  _mm512_store_si512(lanes, x);
  return lanes[0] ^ lanes[7];
}

__attribute__((target("avx512f"))) void write_avx512(void* dst, std::size_t bytes) {
  __m512i* p = static_cast<__m512i*>(dst);
  const __m512i v = _mm512_set1_epi64(0x0101010101010101LL);
  for (std::size_t i = 0, n = bytes / 64; i < n; i += 4) {
    _mm512_stream_si512(p + i, v);
    _mm512_stream_si512(p + i + 1, v);
    _mm512_stream_si512(p + i + 2, v);
    _mm512_stream_si512(p + i + 3, v);
  }
  _mm_sfence();
}

__attribute__((target("avx512f"))) void copy_avx512(void* dst, const void* src, std::size_t bytes) {
  __m512i* d = static_cast<__m512i*>(dst);
  const __m512i* s = static_cast<const __m512i*>(src);
  for (std::size_t i = 0, n = bytes / 64; i < n; i += 4) {
    __m512i a = _mm512_load_si512(s + i), b = _mm512_load_si512(s + i + 1);
    __m512i c = _mm512_load_si512(s + i + 2), e = _mm512_load_si512(s + i + 3);
    _mm512_stream_si512(d + i, a);
    _mm512_stream_si512(d + i + 1, b);
    _mm512_stream_si512(d + i + 2, c);
    _mm512_stream_si512(d + i + 3, e);
  }
  _mm_sfence();
}

__attribute__((target("avx2"))) std::uint64_t read_avx2(const void* src, std::size_t bytes) {
  const __m256i* p = static_cast<const __m256i*>(src);
  __m256i a = _mm256_setzero_si256(), b = a, c = a, d = a;
  for (std::size_t i = 0, n = bytes / 32; i < n; i += 4) {
    a = _mm256_xor_si256(a, _mm256_load_si256(p + i));
    b = _mm256_xor_si256(b, _mm256_load_si256(p + i + 1));
    c = _mm256_xor_si256(c, _mm256_load_si256(p + i + 2));
    d = _mm256_xor_si256(d, _mm256_load_si256(p + i + 3));
  }
  __m256i x = _mm256_xor_si256(_mm256_xor_si256(a, b), _mm256_xor_si256(c, d));
  return static_cast<std::uint64_t>(_mm256_extract_epi64(x, 0) ^ _mm256_extract_epi64(x, 3));
}

__attribute__((target("avx2"))) void write_avx2(void* dst, std::size_t bytes) {
  __m256i* p = static_cast<__m256i*>(dst);
  const __m256i v = _mm256_set1_epi64x(0x0101010101010101LL);
  for (std::size_t i = 0, n = bytes / 32; i < n; i += 4) {
    _mm256_stream_si256(p + i, v);
    _mm256_stream_si256(p + i + 1, v);
    _mm256_stream_si256(p + i + 2, v);
    _mm256_stream_si256(p + i + 3, v);
  }
  _mm_sfence();
}

__attribute__((target("avx2"))) void copy_avx2(void* dst, const void* src, std::size_t bytes) {
  __m256i* d = static_cast<__m256i*>(dst);
  const __m256i* s = static_cast<const __m256i*>(src);
  for (std::size_t i = 0, n = bytes / 32; i < n; i += 4) {
    __m256i a = _mm256_load_si256(s + i), b = _mm256_load_si256(s + i + 1);
    __m256i c = _mm256_load_si256(s + i + 2), e = _mm256_load_si256(s + i + 3);
    _mm256_stream_si256(d + i, a);
    _mm256_stream_si256(d + i + 1, b);
    _mm256_stream_si256(d + i + 2, c);
    _mm256_stream_si256(d + i + 3, e);
  }
  _mm_sfence();
}

std::uint64_t read_sse2(const void* src, std::size_t bytes) {
  const __m128i* p = static_cast<const __m128i*>(src);
  __m128i a = _mm_setzero_si128(), b = a, c = a, d = a;
  for (std::size_t i = 0, n = bytes / 16; i < n; i += 4) {
    a = _mm_xor_si128(a, _mm_load_si128(p + i));
    b = _mm_xor_si128(b, _mm_load_si128(p + i + 1));
    c = _mm_xor_si128(c, _mm_load_si128(p + i + 2));
    d = _mm_xor_si128(d, _mm_load_si128(p + i + 3));
  }
  __m128i x = _mm_xor_si128(_mm_xor_si128(a, b), _mm_xor_si128(c, d));
  return static_cast<std::uint64_t>(_mm_cvtsi128_si64(x));
}

void write_sse2(void* dst, std::size_t bytes) {
  __m128i* p = static_cast<__m128i*>(dst);
  const __m128i v = _mm_set1_epi64x(0x0101010101010101LL);
  for (std::size_t i = 0, n = bytes / 16; i < n; i += 4) {
    _mm_stream_si128(p + i, v);
    _mm_stream_si128(p + i + 1, v);
    _mm_stream_si128(p + i + 2, v);
    _mm_stream_si128(p + i + 3, v);
  }
  _mm_sfence();
}

void copy_sse2(void* dst, const void* src, std::size_t bytes) {
  __m128i* d = static_cast<__m128i*>(dst);
  const __m128i* s = static_cast<const __m128i*>(src);
  for (std::size_t i = 0, n = bytes / 16; i < n; i += 4) {
    __m128i a = _mm_load_si128(s + i), b = _mm_load_si128(s + i + 1);
    __m128i c = _mm_load_si128(s + i + 2), e = _mm_load_si128(s + i + 3);
    _mm_stream_si128(d + i, a);
    _mm_stream_si128(d + i + 1, b);
    _mm_stream_si128(d + i + 2, c);
    _mm_stream_si128(d + i + 3, e);
  }
  _mm_sfence();
}

#endif

std::uint64_t read_portable(const void* src, std::size_t bytes) {
  const std::uint64_t* p = static_cast<const std::uint64_t*>(src);
  std::uint64_t a = 0, b = 0, c = 0, d = 0;
  for (std::size_t i = 0, n = bytes / 8; i < n; i += 4) {
    a ^= p[i];
    b ^= p[i + 1];
    c ^= p[i + 2];
    d ^= p[i + 3];
  }
  return a ^ b ^ c ^ d;
}

struct Kernels {
  const char* isa;
  std::uint64_t (*read)(const void*, std::size_t);
  void (*write)(void*, std::size_t);
  void (*copy)(void*, const void*, std::size_t);
};

Kernels pick() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return {"avx512", read_avx512, write_avx512, copy_avx512};
  if (__builtin_cpu_supports("avx2")) return {"avx2", read_avx2, write_avx2, copy_avx2};
  return {"sse2", read_sse2, write_sse2, copy_sse2};
#else
  return {"portable", read_portable, [](void* d, std::size_t n) { std::memset(d, 1, n); },
          [](void* d, const void* s, std::size_t n) { std::memcpy(d, s, n); }};
#endif
}

const Kernels& kernels() {
  static const Kernels k = pick();
  return k;
}

}  // namespace

std::string membw_isa() {
  return kernels().isa;
}

std::uint64_t run_mem_kernel(MemKernel kernel, void* dst, const void* src, std::size_t bytes) {
  switch (kernel) {
    case MemKernel::Read:
      return kernels().read(src, bytes);
    case MemKernel::Write:
      kernels().write(dst, bytes);
      return 0;
    case MemKernel::Copy:
      kernels().copy(dst, src, bytes);
      return 0;
    case MemKernel::Memcpy:
      std::memcpy(dst, src, bytes);
      return 0;
  }
  return read_portable(src, 0);
}

}  // namespace cb
