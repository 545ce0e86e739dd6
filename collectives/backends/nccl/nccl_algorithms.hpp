// Forced algorithms for `-A`: NCCL_ALGO x NCCL_PROTO, named "<algo>/<proto>" in lower case
// ("ring/ll128", "nvlstree/simple"). NCCL reads both variables at each communicator init, so
// every combination gets its own communicator. Only the five collectives NCCL's selection
// affects (allreduce, allgather, reduce_scatter, broadcast, reduce) have them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/catalogue/catalogue.hpp"

namespace cb::nccl {

struct ForcedAlgorithm {
  std::string algo;   // NCCL_ALGO value, e.g. "Ring"
  std::string proto;  // NCCL_PROTO value, e.g. "LL128"
};

// Whether NCCL's algorithm selection applies to `c`.
bool has_algorithms(Collective c);
// Every "<algo>/<proto>" name the NCCL release `version_code` knows, in a stable order.
std::vector<std::string> algorithm_names(int version_code);
// "ring/ll128" -> {Ring, LL128}; nullopt for anything else (case-insensitive).
std::optional<ForcedAlgorithm> parse_algorithm(std::string_view name);

}  // namespace cb::nccl
