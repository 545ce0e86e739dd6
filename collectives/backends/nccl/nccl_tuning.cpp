#include "collectives/backends/nccl/nccl_tuning.hpp"

#include <fmt/format.h>

#include <limits>
#include <map>

#include "collectives/catalogue/catalogue.hpp"
#include "collectives/backends/tuning.hpp"

namespace cb::nccl {

namespace {

std::string nccl_tuner_name(Collective c) {
  switch (c) {
    case Collective::AllReduce:
      return "allreduce";
    case Collective::AllGather:
      return "allgather";
    case Collective::ReduceScatter:
      return "reducescatter";
    case Collective::Broadcast:
      return "broadcast";
    case Collective::Reduce:
      return "reduce";
    default:
      return "";
  }
}

// commbench's NCCL names ("collnetdirect/ll128") as the tuner example plugin spells them.
std::pair<std::string, std::string> nccl_tuner_algo_proto(const std::string& algorithm) {
  auto slash = algorithm.find('/');
  if (slash == std::string::npos) return {"", ""};
  std::string algo = algorithm.substr(0, slash);
  static const std::map<std::string, std::string> kSpelling = {{"collnetdirect", "collnet_direct"},
                                                               {"collnetchain", "collnet_chain"},
                                                               {"nvlstree", "nvls_tree"}};
  if (auto it = kSpelling.find(algo); it != kSpelling.end()) algo = it->second;
  return {algo, algorithm.substr(slash + 1)};
}

}  // namespace

std::string nccl_tuner_file(const std::vector<TuneRange>& ranges) {
  std::string out =
      "# NCCL tuner plugin configuration written by commbench tune (NCCL's example tuner format).\n"
      "# Use: NCCL_TUNER_PLUGIN=<example tuner> NCCL_TUNER_CONFIG_FILE=THIS_FILE\n"
      "# collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks\n";
  for (const auto& [c, rs] : first_groups(ranges, "nccl")) {
    const std::string coll = nccl_tuner_name(c);
    if (coll.empty()) continue;
    for (std::size_t i = 0; i < rs.size(); ++i) {
      auto [algo, proto] = nccl_tuner_algo_proto(rs[i]->algorithm);
      if (algo.empty()) continue;  // default: leave the choice to NCCL
      std::uint64_t from = i == 0 ? 0 : rs[i]->min_bytes;
      std::uint64_t to = i + 1 < rs.size()
                             ? rs[i + 1]->min_bytes - 1
                             : static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
      out += fmt::format("{},{},{},{},{},-1,{},{}\n", coll, from, to, algo, proto, rs[i]->nnodes,
                         rs[i]->nranks);
    }
  }
  return out;
}

}  // namespace cb::nccl
