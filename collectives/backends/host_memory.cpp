#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <new>

#include "collectives/backend.hpp"
#include "common/error.hpp"
#include "common/units.hpp"

namespace cb {

namespace {

class HostMemory : public Memory {
 public:
  MemoryKind kind() const override { return MemoryKind::Host; }
  void* allocate(std::uint64_t bytes) override {
    if (bytes == 0) return nullptr;
    // Overcommit would let a huge request "succeed" and the first touch kill the process.
    const std::uint64_t physical = static_cast<std::uint64_t>(sysconf(_SC_PHYS_PAGES)) *
                                   static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
    if (physical > 0 && bytes > physical) {
      usage_error("cannot allocate a {} buffer in host memory: this machine has {}",
                  format_size(bytes), format_size(physical));
    }
    // Page-aligned; touched once so first-touch page faults stay out of timed regions.
    constexpr std::size_t kAlign = 4096;
    std::uint64_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
    void* p = rounded >= bytes ? std::aligned_alloc(kAlign, rounded) : nullptr;
    if (!p) usage_error("cannot allocate a {} buffer in host memory", format_size(bytes));
    std::memset(p, 0, rounded);
    return p;
  }
  void release(void* p) override { std::free(p); }
  void fill(void* dst, std::uint64_t count, const PeriodicTable& t,
            std::uint64_t src_offset) override {
    fill_periodic(dst, count, t, src_offset);
  }
  void poison(void* dst, std::uint64_t bytes) override {
    std::memset(dst, kUnwrittenMarker, bytes);
  }
  std::uint64_t count_wrong(const void* buf, std::uint64_t count, const PeriodicTable& t,
                            std::uint64_t src_offset) override {
    return count_wrong_periodic(buf, count, t, src_offset);
  }
  void corrupt(void* buf, std::uint64_t element_size) override {
    auto* b = static_cast<unsigned char*>(buf);
    for (std::uint64_t i = 0; i < element_size; ++i) b[i] ^= 0x5A;
  }
};

}  // namespace

std::unique_ptr<Memory> make_host_memory() {
  return std::make_unique<HostMemory>();
}

}  // namespace cb
