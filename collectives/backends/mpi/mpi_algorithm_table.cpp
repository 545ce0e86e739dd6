#include "collectives/backends/mpi/mpi_algorithm_table.hpp"

#include <algorithm>
#include <cctype>

namespace cb::mpi {

namespace {

bool is_pof2(int n) {
  return n > 0 && (n & (n - 1)) == 0;
}

// Largest power of two <= n.
std::uint64_t pof2_floor(int n) {
  std::uint64_t p = 1;
  while (p * 2 <= static_cast<std::uint64_t>(n)) p *= 2;
  return p;
}

// The collective's name inside MPI variable names.
std::string_view ompi_stem(Collective c) {
  switch (c) {
    case Collective::AllReduce:
      return "allreduce";
    case Collective::AllGather:
      return "allgather";
    case Collective::ReduceScatter:
      return "reduce_scatter_block";
    case Collective::Broadcast:
      return "bcast";
    case Collective::Reduce:
      return "reduce";
    case Collective::AllToAll:
      return "alltoall";
    case Collective::Gather:
      return "gather";
    case Collective::Scatter:
      return "scatter";
    case Collective::Barrier:
      return "barrier";
    case Collective::AllToAllV:
      return "alltoallv";
    case Collective::SendRecv:
      return "";
  }
  return "";
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (auto& ch : out) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return out;
}

std::string ompi_reason(std::string_view a, const CallTraits& t) {
  const std::uint64_t pof2 = pof2_floor(t.nranks);
  switch (t.collective) {
    case Collective::AllReduce:
      if (a == "ring" && t.count < static_cast<std::uint64_t>(t.nranks)) {
        return "count < nranks: Open MPI runs recursive_doubling instead";
      }
      if (a == "segmented_ring") {
        // coll_base: count < nranks * segcount falls back to ring (segcount from the segment).
        std::uint64_t segcount = std::max<std::uint64_t>(1, kOmpiSegmentedRingBytes / t.type_size);
        if (t.count * t.type_size <= kOmpiSegmentedRingBytes ||
            t.count < static_cast<std::uint64_t>(t.nranks) * segcount) {
          return "the message is smaller than nranks x its 1 MiB segment: Open MPI runs ring "
                 "instead";
        }
      }
      if (a == "rabenseifner" && (t.count < pof2 || !t.commutative)) {
        return "count < the largest power of two <= nranks: Open MPI runs basic_linear instead";
      }
      break;
    case Collective::AllGather:
      if (a == "recursive_doubling" && !is_pof2(t.nranks)) {
        return "nranks is not a power of two: Open MPI runs bruck instead";
      }
      if (a == "neighbor" && t.nranks % 2 != 0) {
        return "nranks is odd: Open MPI runs ring instead";
      }
      if (a == "two_proc" && t.nranks != 2) return "nranks != 2: two_proc refuses to run";
      break;
    case Collective::AllToAll:
      if (t.in_place) return "in place: Open MPI runs its in-place pairwise exchange instead";
      if (a == "two_proc" && t.nranks != 2) return "nranks != 2: two_proc refuses to run";
      break;
    case Collective::AllToAllV:
      if (t.in_place) return "in place: Open MPI runs its in-place pairwise exchange instead";
      break;
    case Collective::Barrier:
      if (a == "two_proc" && t.nranks != 2) return "nranks != 2: two_proc refuses to run";
      break;
    case Collective::Broadcast:
      if (a == "split_binary_tree" && t.count < 2) {
        return "count < 2: Open MPI runs chain instead";
      }
      if ((a == "scatter_allgather" || a == "scatter_allgather_ring") &&
          t.count < static_cast<std::uint64_t>(t.nranks)) {
        return "count < nranks: Open MPI runs basic_linear instead";
      }
      break;
    case Collective::Reduce:
      if (a == "rabenseifner" && (t.nranks < 2 || t.count < pof2 || !t.commutative)) {
        return "count < the largest power of two <= nranks: Open MPI runs linear instead";
      }
      break;
    case Collective::ReduceScatter:
      if ((a == "recursive_halving" || a == "butterfly") && !t.commutative) {
        return "the operation is not commutative: Open MPI runs basic_linear instead";
      }
      break;
    default:
      break;
  }
  return {};
}

std::string mpich_reason(std::string_view a, const CallTraits& t) {
  const std::uint64_t pof2 = pof2_floor(t.nranks);
  // "smp" needs a hierarchical communicator; on a single node MPICH 4.0.2 fails inside it.
  if (a == "smp" && !t.multi_node) return "all ranks are on one node: smp needs several nodes";
  switch (t.collective) {
    case Collective::AllReduce:
      if (a == "smp" && !t.commutative) return "the operation is not commutative";
      if (a == "reduce_scatter_allgather") {
        if (!t.builtin_op) return "the operation is not predefined";
        if (t.count < pof2) return "count < the largest power of two <= nranks";
      }
      break;
    case Collective::Reduce:
      if (a == "smp" && !t.commutative) return "the operation is not commutative";
      if (a == "reduce_scatter_gather") {
        if (!t.builtin_op) return "the operation is not predefined";
        if (t.count < pof2) return "count < the largest power of two <= nranks";
      }
      break;
    case Collective::Broadcast:
      if (a == "scatter_recursive_doubling_allgather" && !is_pof2(t.nranks)) {
        return "nranks is not a power of two";
      }
      break;
    case Collective::AllGather:
      if (a == "recursive_doubling" && !is_pof2(t.nranks)) return "nranks is not a power of two";
      break;
    case Collective::ReduceScatter:
      if (a == "noncommutative" && !is_pof2(t.nranks)) return "nranks is not a power of two";
      if ((a == "pairwise" || a == "recursive_halving") && !t.commutative) {
        return "the operation is not commutative";
      }
      break;
    case Collective::AllToAll:
      if ((a == "brucks" || a == "pairwise" || a == "scattered") && t.in_place) {
        return "in place: this algorithm cannot run in place";
      }
      if (a == "pairwise_sendrecv_replace" && !t.in_place) {
        return "out of place: this algorithm runs in place only";
      }
      break;
    case Collective::AllToAllV:
      if (a == "scattered" && t.in_place) return "in place: this algorithm cannot run in place";
      if (a == "pairwise_sendrecv_replace" && !t.in_place) {
        return "out of place: this algorithm runs in place only";
      }
      break;
    default:
      break;
  }
  return {};
}

}  // namespace

MpiFlavor flavor_of(std::string_view library) {
  if (library.rfind("Open MPI", 0) == 0) return MpiFlavor::OpenMpi;
  if (library.rfind("MPICH", 0) == 0) return MpiFlavor::Mpich;
  return MpiFlavor::Other;
}

std::string ompi_algorithm_variable(Collective c) {
  std::string_view stem = ompi_stem(c);
  return stem.empty() ? std::string() : "coll_tuned_" + std::string(stem) + "_algorithm";
}

std::vector<std::string> ompi_known_algorithms(Collective c) {
  switch (c) {
    case Collective::AllReduce:
      return {"basic_linear", "nonoverlapping", "recursive_doubling",
              "ring",         "segmented_ring", "rabenseifner"};
    case Collective::Broadcast:
      return {"basic_linear",          "chain",    "pipeline", "split_binary_tree",
              "binary_tree",           "binomial", "knomial",  "scatter_allgather",
              "scatter_allgather_ring"};
    case Collective::Reduce:
      return {"linear",   "chain",           "pipeline",    "binary",
              "binomial", "in-order_binary", "rabenseifner"};
    case Collective::AllGather:
      return {"linear", "bruck", "recursive_doubling", "ring", "neighbor", "two_proc"};
    case Collective::ReduceScatter:
      return {"basic_linear", "recursive_doubling", "recursive_halving", "butterfly"};
    case Collective::AllToAll:
      return {"linear", "pairwise", "modified_bruck", "linear_sync", "two_proc"};
    case Collective::Gather:
      return {"basic_linear", "binomial", "linear_sync"};
    case Collective::Scatter:
      return {"basic_linear", "binomial", "linear_nb"};
    case Collective::Barrier:
      return {"linear", "double_ring", "recursive_doubling", "bruck", "two_proc", "tree"};
    case Collective::AllToAllV:
      return {"basic_linear", "pairwise"};
    case Collective::SendRecv:
      return {};
  }
  return {};
}

std::string mpich_algorithm_variable(Collective c) {
  std::string_view stem = ompi_stem(c);
  return stem.empty() ? std::string() : "MPIR_CVAR_" + upper(stem) + "_INTRA_ALGORITHM";
}

std::string mpich_device_variable(Collective c) {
  std::string_view stem = ompi_stem(c);
  return stem.empty() ? std::string() : "MPIR_CVAR_" + upper(stem) + "_DEVICE_COLLECTIVE";
}

std::vector<std::string> mpich_known_algorithms(Collective c) {
  // MPICH 4.0.2 src/mpi/coll/cvars.txt, in enum order after "auto".
  switch (c) {
    case Collective::Barrier:
      return {"nb", "smp", "dissemination"};
    case Collective::Broadcast:
      return {"binomial", "nb", "smp", "scatter_recursive_doubling_allgather",
              "scatter_ring_allgather"};
    case Collective::Reduce:
      return {"binomial", "nb", "smp", "reduce_scatter_gather"};
    case Collective::AllReduce:
      return {"nb", "smp", "recursive_doubling", "reduce_scatter_allgather"};
    case Collective::AllGather:
      return {"brucks", "nb", "recursive_doubling", "ring"};
    case Collective::ReduceScatter:
      return {"noncommutative", "recursive_doubling", "pairwise", "recursive_halving", "nb"};
    case Collective::AllToAll:
      return {"brucks", "nb", "pairwise", "pairwise_sendrecv_replace", "scattered"};
    case Collective::Gather:
    case Collective::Scatter:
      return {"binomial", "nb"};
    case Collective::AllToAllV:
      return {"nb", "pairwise_sendrecv_replace", "scattered"};
    case Collective::SendRecv:
      return {};
  }
  return {};
}

std::optional<int> mpich_algorithm_value(Collective c, std::string_view name) {
  auto names = mpich_known_algorithms(c);
  auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) return std::nullopt;
  return static_cast<int>(it - names.begin()) + 1;
}

std::string inapplicable_reason(MpiFlavor flavor, std::string_view algorithm, const CallTraits& t) {
  if (algorithm == "default") return {};
  switch (flavor) {
    case MpiFlavor::OpenMpi:
      return ompi_reason(algorithm, t);
    case MpiFlavor::Mpich:
      return mpich_reason(algorithm, t);
    case MpiFlavor::Other:
      return {};
  }
  return {};
}

}  // namespace cb::mpi
