// What Open MPI 4.1 (coll/tuned) and MPICH 4.0 let a run force per collective, as data: the
// control variable, the algorithm names, and when a forced algorithm would not run as named.
//
// Open MPI quietly runs another algorithm for some counts (ring allreduce with count < nranks
// runs recursive doubling), and MPICH refuses an algorithm whose restrictions a call violates
// (with MPIR_CVAR_COLLECTIVE_FALLBACK=error). Either way the case is skipped with the reason
// from inapplicable_reason(), never measured under the wrong name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/catalogue/catalogue.hpp"

namespace cb::mpi {

enum class MpiFlavor { OpenMpi, Mpich, Other };

// From library_version(): "Open MPI 4.1.4" -> OpenMpi, "MPICH 4.0.2" -> Mpich.
MpiFlavor flavor_of(std::string_view library);

// What decides whether a forced algorithm runs as named; the same on every rank.
struct CallTraits {
  Collective collective = Collective::AllReduce;
  int nranks = 1;
  std::uint64_t count = 0;    // per-rank count, as in the catalogue
  std::size_t type_size = 4;  // bytes per element
  bool in_place = false;
  bool builtin_op = true;  // commbench only uses MPI's predefined operations
  bool commutative = true;
  bool multi_node = false;  // ranks on more than one node, some node with several
};

// Open MPI's MCA/MPI_T variable that forces `c`'s algorithm ("" where there is none), e.g.
// "coll_tuned_allreduce_algorithm". reduce_scatter is MPI_Reduce_scatter_block.
std::string ompi_algorithm_variable(Collective c);
// Open MPI 4.1 algorithm names by ID (1, 2, ...), for when MPI_T offers no enum.
std::vector<std::string> ompi_known_algorithms(Collective c);
// Segment size commbench sets for allreduce segmented_ring (Open MPI's own choice in its older
// fixed rules); without one it always falls back to ring.
inline constexpr std::uint64_t kOmpiSegmentedRingBytes = 1ULL << 20;

// MPICH's CVAR for `c`'s algorithm ("" where there is none), e.g.
// "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM", and the one routing `c` through the device layer.
std::string mpich_algorithm_variable(Collective c);
std::string mpich_device_variable(Collective c);
// MPICH 4.0 algorithm names in CVAR order; the position of a name is the value to write, and
// position 0 is "auto" (not listed).
std::vector<std::string> mpich_known_algorithms(Collective c);
std::optional<int> mpich_algorithm_value(Collective c, std::string_view name);

// Why forcing `algorithm` would not run it as named for `t`, or empty when it would. The text
// reads after "skipped where ...".
std::string inapplicable_reason(MpiFlavor flavor, std::string_view algorithm, const CallTraits& t);

}  // namespace cb::mpi
