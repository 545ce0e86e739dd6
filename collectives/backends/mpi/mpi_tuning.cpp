#include "collectives/backends/mpi/mpi_tuning.hpp"

#include <fmt/format.h>

#include "collectives/catalogue/catalogue.hpp"
#include "collectives/backends/mpi/mpi_algorithm_table.hpp"
#include "collectives/backends/tuning.hpp"
#include "common/units.hpp"

namespace cb::mpi {

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
    case Collective::AllToAllV:
      return 4;
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

// The range of the most sizes (of equals, the larger sizes'): for alltoallv, whose rules Open
// MPI reads at message size 0 only, as it cannot know the total (coll_tuned_decision_dynamic.c).
const TuneRange* widest(const std::vector<const TuneRange*>& rs) {
  const TuneRange* best = rs.front();
  for (const TuneRange* r : rs) {
    if (r->sizes >= best->sizes) best = r;
  }
  return best;
}

}  // namespace

std::string ompi_rules_file(const std::vector<TuneRange>& ranges) {
  auto groups = first_groups(ranges, "mpi");
  std::string body;
  int collectives = 0;
  for (auto [c, rs] : groups) {
    const int id = ompi_collective_id(c);
    if (id < 0 || rs.empty()) continue;
    const auto names = ompi_known_algorithms(c);
    std::string rules;
    int nrules = 0;
    if (c == Collective::AllToAllV) rs = {widest(rs)};
    for (std::size_t i = 0; i < rs.size(); ++i) {
      int algorithm = 0;  // 0: Open MPI's own fixed decision
      for (std::size_t k = 0; k < names.size(); ++k) {
        if (names[k] == rs[i]->algorithm) algorithm = static_cast<int>(k) + 1;
      }
      std::uint64_t from = i == 0 ? 0 : ompi_message_bytes(c, rs[i]->min_bytes, rs[i]->nranks);
      rules += c == Collective::AllToAllV
                   ? fmt::format(
                         "0 {} 0 0   # every size (Open MPI decides alltoallv by "
                         "communicator size alone): {}, the choice at {} of the sizes\n",
                         algorithm, rs[i]->algorithm, rs[i]->sizes)
                   : fmt::format("{} {} 0 0   # from {}: {}\n", from, algorithm, format_size(from),
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

}  // namespace cb::mpi
