// The files `commbench tune` writes: Open MPI dynamic rules and an NCCL tuner configuration.
#include "cmd/tune_files.hpp"

#include <fmt/format.h>

#include <limits>
#include <map>

#include "collectives/catalogue.hpp"
#include "collectives/mpi/mpi_algorithm_table.hpp"
#include "common/units.hpp"

namespace cb {

namespace {

// Open MPI's collective IDs (coll_base_functions.h); reduce_scatter runs as reduce_scatter_block.
int ompi_collective_id(Collective c) {
  switch (c) {
    case Collective::AllGather:
      return 0;
    case Collective::AllReduce:
      return 2;
    case Collective::AllToAll:
      return 3;
    case Collective::Barrier:
      return 6;
    case Collective::Broadcast:
      return 7;
    case Collective::Gather:
      return 9;
    case Collective::Reduce:
      return 11;
    case Collective::ReduceScatter:
      return 13;
    case Collective::Scatter:
      return 15;
    default:
      return -1;
  }
}

// The message size Open MPI's rules compare: one block (dtype size x the call's count).
std::uint64_t ompi_message_bytes(Collective c, std::uint64_t bytes, int nranks) {
  const auto& i = info(c);
  bool blocks = i.send == Extent::PerRank || i.recv == Extent::PerRank;
  return blocks && nranks > 0 ? bytes / static_cast<std::uint64_t>(nranks) : bytes;
}

// Ranges of the first (dtype, op, placement, root) group seen for each collective of `backend`.
std::map<Collective, std::vector<const TuneRange*>> first_groups(
    const std::vector<TuneRange>& ranges, const std::string& backend) {
  std::map<Collective, std::vector<const TuneRange*>> out;
  std::map<Collective, std::string> chosen;
  for (const auto& r : ranges) {
    auto c = parse_collective(r.collective);
    if (r.backend != backend || !c) continue;
    std::string group = r.dtype + "/" + r.op + "/" + r.placement + "/" + std::to_string(r.root);
    auto [it, fresh] = chosen.emplace(*c, group);
    if (fresh || it->second == group) out[*c].push_back(&r);
  }
  return out;
}

}  // namespace

std::string ompi_rules_file(const std::vector<TuneRange>& ranges) {
  auto groups = first_groups(ranges, "mpi");
  std::string body;
  int collectives = 0;
  for (const auto& [c, rs] : groups) {
    const int id = ompi_collective_id(c);
    if (id < 0 || rs.empty()) continue;
    const auto names = mpi::ompi_known_algorithms(c);
    std::string rules;
    int nrules = 0;
    for (std::size_t i = 0; i < rs.size(); ++i) {
      int algorithm = 0;  // 0: Open MPI's own fixed decision
      for (std::size_t k = 0; k < names.size(); ++k) {
        if (names[k] == rs[i]->algorithm) algorithm = static_cast<int>(k) + 1;
      }
      std::uint64_t from = i == 0 ? 0 : ompi_message_bytes(c, rs[i]->min_bytes, rs[i]->nranks);
      rules += fmt::format("{} {} 0 0   # from {}: {}\n", from, algorithm, format_size(from),
                           rs[i]->algorithm);
      ++nrules;
    }
    body +=
        fmt::format("{}   # {}\n1   # communicator sizes\n{} {}   # ranks, message-size rules\n{}",
                    id, name(c), rs.front()->nranks, nrules, rules);
    ++collectives;
  }
  return fmt::format(
      "# Open MPI coll/tuned dynamic rules written by commbench tune.\n"
      "# Use: OMPI_MCA_coll_tuned_use_dynamic_rules=1 "
      "OMPI_MCA_coll_tuned_dynamic_rules_filename=THIS_FILE mpirun ...\n"
      "{}   # collectives\n{}",
      collectives, body);
}

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

}  // namespace cb
