#include "collectives/patterns/fsdp_units.hpp"

#include <map>

#include "common/error.hpp"

namespace cb {

std::uint64_t FsdpUnit::padded() const {
  return shard * static_cast<std::uint64_t>(world);
}

std::vector<FsdpUnit> fsdp_units(const std::vector<Param>& params, int world) {
  std::vector<FsdpUnit> units;
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const Param& p = params[i];
    auto [it, fresh] = index.try_emplace(p.unit, units.size());
    if (fresh) {
      units.push_back({});
      units.back().name = p.unit;
      units.back().dtype = p.dtype;
      units.back().world = world;
    }
    FsdpUnit& u = units[it->second];
    if (u.dtype != p.dtype) {
      usage_error(
          "FSDP unit '{}' holds {} ({}) and {} ({}): FSDP flattens a unit's parameters into one "
          "tensor of one dtype",
          u.name.empty() ? "(root)" : u.name, params[u.params.front()].name, info(u.dtype).name,
          p.name, info(p.dtype).name);
    }
    u.params.push_back(i);
    u.numel += p.numel;
  }
  const auto w = static_cast<std::uint64_t>(world);
  for (auto& u : units) u.shard = (u.numel + w - 1) / w;
  return units;
}

}  // namespace cb
