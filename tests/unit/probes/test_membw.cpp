// Memory bandwidth kernels do what they claim (bytes written, bytes copied) and the probe fills
// its matrix; speed itself is measured, not asserted.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "probes/membw.hpp"

namespace cb {
namespace {

struct Aligned {
  explicit Aligned(std::size_t n) : bytes(n) { p = static_cast<char*>(std::aligned_alloc(64, n)); }
  ~Aligned() { std::free(p); }
  char* p;
  std::size_t bytes;
};

TEST(MembwKernels, CopyAndWriteMoveEveryByte) {
  const std::size_t n = 1 << 16;
  Aligned src(n), dst(n);
  for (std::size_t i = 0; i < n; ++i) src.p[i] = static_cast<char>(i * 7);
  std::memset(dst.p, 0, n);
  for (MemKernel k : {MemKernel::Copy, MemKernel::Memcpy}) {
    std::memset(dst.p, 0, n);
    run_mem_kernel(k, dst.p, src.p, n);
    EXPECT_EQ(std::memcmp(dst.p, src.p, n), 0) << kernel_name(k) << " on " << membw_isa();
  }
  run_mem_kernel(MemKernel::Write, dst.p, nullptr, n);
  EXPECT_EQ(std::vector<char>(dst.p, dst.p + n), std::vector<char>(n, 1));
  // Reading depends on every line: flipping one byte changes the result.
  std::uint64_t a = run_mem_kernel(MemKernel::Read, nullptr, src.p, n);
  src.p[64 * 5] ^= 1;
  EXPECT_NE(run_mem_kernel(MemKernel::Read, nullptr, src.p, n), a);
}

TEST(Membw, MeasuresEveryNodePairAndKernel) {
  MembwOptions o;
  o.bytes = 4 << 20;
  o.repeats = 3;
  o.threads = 2;
  o.kernels = {MemKernel::Read, MemKernel::Copy};
  MembwResult r = measure_membw(o);
  ASSERT_FALSE(r.cpu_nodes.empty());
  ASSERT_EQ(r.kernels.size(), 2u);
  for (const auto& [kernel, cells] : r.kernels) {
    EXPECT_EQ(cells.size(), r.cpu_nodes.size() * r.memory_nodes.size());
    for (const auto& c : cells) {
      EXPECT_GT(c.median_GBps, 0) << kernel_name(kernel);
      EXPECT_LE(c.min_GBps, c.median_GBps);
      EXPECT_LE(c.median_GBps, c.max_GBps);
      EXPECT_EQ(c.threads, 2);
    }
  }
  auto doc = membw_to_json(r);
  EXPECT_EQ(doc["schema"], "commbench/membw/v1");
  EXPECT_EQ(doc["kernels"]["read"]["GBps"].size(), r.cpu_nodes.size());
  EXPECT_FALSE(doc["kernels"].contains("write"));
}

}  // namespace
}  // namespace cb
