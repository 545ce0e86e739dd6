#include "collectives/backends/tuning.hpp"

namespace cb {

std::map<Collective, std::vector<const TuneRange*>> first_groups(
    const std::vector<TuneRange>& ranges, const std::string& backend) {
  std::map<Collective, std::vector<const TuneRange*>> out;
  std::map<Collective, std::string> chosen;
  for (const auto& r : ranges) {
    auto c = parse_collective(r.collective);
    if (r.backend != backend || !c) continue;
    std::string group =
        r.dtype + "/" + r.op + "/" + r.placement + "/" + std::to_string(r.root) + "/" + r.split;
    auto [it, fresh] = chosen.emplace(*c, group);
    if (fresh || it->second == group) out[*c].push_back(&r);
  }
  return out;
}

}  // namespace cb
