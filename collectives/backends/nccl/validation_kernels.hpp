// GPU fill and check against a periodic table (collectives/validation/pattern.hpp), at memory speed: each
// block keeps the table in shared memory, threads move 16 bytes at a time in a grid-stride loop,
// and mismatches are counted per warp and added atomically to one counter.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace cb::cuda {

// dst[i] = table[(start + i) % period] for i < count. `table` is on the device and holds the
// period twice over (2 x period elements of element_size bytes: 1, 2, 4 or 8); start < period.
void launch_fill(void* dst, std::uint64_t count, const void* table, std::size_t element_size,
                 std::uint32_t period, std::uint32_t start, cudaStream_t stream);

// Adds to *counter (device memory) the number of i < count with
// buf[i] != table[(start + i) % period], comparing bits.
void launch_count_wrong(const void* buf, std::uint64_t count, const void* table,
                        std::size_t element_size, std::uint32_t period, std::uint32_t start,
                        unsigned long long* counter, cudaStream_t stream);

}  // namespace cb::cuda
