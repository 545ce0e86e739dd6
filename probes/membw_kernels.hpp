// Memory bandwidth kernels: streaming read, write and copy over one thread's slice, with the
// widest loads and non-temporal stores the CPU offers, so that DRAM, not the core, is the limit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace cb {

enum class MemKernel { Read, Write, Copy, Memcpy };

// The kernel set in use ("avx512", "avx2", "sse2" or "portable"), chosen once at run time.
std::string membw_isa();
// Runs `kernel` over `bytes` (a multiple of 256) at 64-byte aligned `dst`/`src`. Read only
// uses `src`, write only `dst`. Returns a value derived from what was read, so that the
// loads cannot be optimised away.
std::uint64_t run_mem_kernel(MemKernel kernel, void* dst, const void* src, std::size_t bytes);

}  // namespace cb
