// What NCCL chose, read from its own TUNING debug lines (NCCL_DEBUG=INFO,
// NCCL_DEBUG_SUBSYS=TUNING). Rank 0 of a communicator prints one line per collective; the shape
// changed across releases:
//   2.20-2.22  "<bytes> Bytes -> Algo <int> proto <int> time <float>"
//   2.23       "<Func>: <bytes> Bytes -> Algo <int> proto <int> time <float>"
//   2.24+      "<Func>: <bytes> Bytes -> Algo <NAME> proto <NAME> channel{Lo..Hi}={<lo>..<hi>}"
//              (later releases append " comm 0x..." or " cgaClusterSize <n>")
//   symmetric  "<Func> [Symmetric]: <bytes> Bytes -> Kernel <name> nchannels <n> nthreads <n> ..."
// NCCL 2.19 and older print it only at TRACE level, which release builds compile out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/catalogue/catalogue.hpp"

namespace cb::nccl {

struct TuningChoice {
  std::string function;  // "AllReduce"; empty before 2.23
  std::uint64_t bytes = 0;
  std::string algorithm;  // as 2.24+ prints it: TREE, RING, COLLNET_DIRECT, ..., PAT
  std::string protocol;   // LL, LL128, SIMPLE; empty for a symmetric kernel
  int channels = -1;      // unknown before 2.24
  std::string kernel;     // the symmetric kernel's name
};

// Parses one line of NCCL debug output; nullopt when it is not a per-collective TUNING line.
std::optional<TuningChoice> parse_tuning_line(std::string_view line);

// "RING/SIMPLE, 32 ch", "RING/SIMPLE" (no channel count before 2.24), or
// "symmetric kernel AllReduce_AGxLL_R, 16 ch".
std::string describe(const TuningChoice& choice);

// NCCL's name for the function a collective runs ("AllReduce"); empty for those NCCL runs as
// point-to-point (alltoall, gather, scatter, sendrecv), which print no TUNING line.
std::string_view tuning_function(Collective c);

// The choice for `function` among `lines`: the first line naming it, or, for releases that
// print no function name, the first line of one of `bytes` sizes.
std::optional<TuningChoice> find_choice(const std::vector<std::string>& lines,
                                        std::string_view function,
                                        const std::vector<std::uint64_t>& bytes);

}  // namespace cb::nccl
