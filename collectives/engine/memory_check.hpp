// Whether a run's host buffers fit in this host's memory, checked before anything is allocated
// (a run that does not fit would otherwise be ended by the kernel's OOM killer part way).
#pragma once

#include <cstdint>
#include <string>

namespace cb {

// Host memory available to new allocations: MemAvailable, lowered to what the cgroup still
// allows when it has a limit. 0 when unknown.
std::uint64_t available_host_memory();

// Empty when `ranks_here` ranks, each holding `send` + `recv` bytes of host buffers, fit in
// `available` bytes (0: unknown, always fits); else the usage message naming the sizes.
std::string host_memory_shortfall(std::uint64_t send, std::uint64_t recv, int ranks_here,
                                  std::uint64_t available);

}  // namespace cb
