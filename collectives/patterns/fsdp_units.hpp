// FSDP (full shard) units: each wrapped unit's parameters flattened into one tensor, padded so
// that it splits into equal shards, one per rank (PyTorch 1.13.1
// torch/distributed/fsdp/flat_param.py, FlatParamHandle._get_unpadded_shard and _get_shard: the
// flat tensor is chunked with torch.chunk into world-size pieces of ceil(numel / world) elements,
// and each rank's piece is padded with zeros to that length).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collectives/patterns/model.hpp"

namespace cb {

struct FsdpUnit {
  std::string name;  // the unit column's value; "" the root unit
  DType dtype = DType::Float;
  std::vector<std::size_t> params;  // indices into model.params
  std::uint64_t numel = 0;          // unpadded
  std::uint64_t shard = 0;          // elements per rank: ceil(numel / world)
  std::uint64_t padded() const;     // shard x world
  int world = 1;
};

// Units in the order their first parameter appears (the forward order commbench replays). A
// usage Error when a unit holds parameters of two dtypes (FSDP flattens a unit into one tensor).
std::vector<FsdpUnit> fsdp_units(const std::vector<Param>& params, int world);

}  // namespace cb
