// Float buffers for the bare loops from commbench's own host allocator (page-aligned, touched
// once), so that a bare loop and commbench hand the library the same kind of memory and their ratio
// measures the harness, not the buffers (a std::vector's data starts 16 bytes past a page).
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>

#include "collectives/backend.hpp"

namespace cb::bench {

class HostFloats {
 public:
  HostFloats(std::size_t count, float value)
      : memory_(make_host_memory()),
        data_(static_cast<float*>(memory_->allocate(count * sizeof(float)))),
        count_(count) {
    std::fill(data_, data_ + count_, value);
  }
  ~HostFloats() { memory_->release(data_); }
  HostFloats(const HostFloats&) = delete;
  HostFloats& operator=(const HostFloats&) = delete;
  float* data() { return data_; }
  std::size_t size() const { return count_; }

 private:
  std::unique_ptr<Memory> memory_;
  float* data_;
  std::size_t count_;
};

}  // namespace cb::bench
