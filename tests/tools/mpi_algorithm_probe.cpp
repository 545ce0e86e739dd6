// Evidence that a forced MPI algorithm really runs: reduces with a user operation that is
// declared commutative but is not (out = 31*out + 7*in + 1, wrapping), so every reduction order
// leaves a different result. For each algorithm it prints one line
//   <algorithm> <hash of every rank's result>
// on rank 0, forcing the algorithm through commbench's own selection code (as `run -A` does).
// With --as-launched it prints one line "launched <hash>" for whatever the launch environment
// forced, e.g. OMPI_MCA_coll_tuned_allreduce_algorithm=4: the integration test checks that both
// ways give the same result for every algorithm, and that the algorithms differ.
// With --refuse ALGORITHM it forces ALGORITHM without commbench's own applicability check and
// prints "refused <MPI error>" or "accepted <hash>": MPICH (fallback=error) refuses an algorithm
// whose restriction the call breaks, which it can only do if the forced value reached it.
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "collectives/catalogue/catalogue.hpp"
#include "collectives/backends/mpi/mpi_algorithm_select.hpp"
#include "collectives/backends/mpi/mpi_runtime.hpp"

namespace {

void order_sensitive(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* a = static_cast<std::uint64_t*>(in);
  auto* b = static_cast<std::uint64_t*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = b[i] * 31u + a[i] * 7u + 1u;
}

std::uint64_t fnv1a(const std::vector<std::uint64_t>& v, std::uint64_t h) {
  for (std::uint64_t x : v) {
    for (int b = 0; b < 8; ++b) {
      h ^= (x >> (8 * b)) & 0xffu;
      h *= 1099511628211ull;
    }
  }
  return h;
}

// Runs the collective once on `comm`; returns the hash of all ranks' results (on rank 0), or
// puts MPI's error in `error` when `error` is given and the call fails.
std::uint64_t run_once(cb::Collective c, MPI_Comm comm, MPI_Op op, int count,
                       std::string* error = nullptr) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int total = c == cb::Collective::ReduceScatter ? count * size : count;
  std::vector<std::uint64_t> in(static_cast<std::size_t>(total));
  for (int i = 0; i < total; ++i) {
    in[static_cast<std::size_t>(i)] =
        1000003ull * static_cast<std::uint64_t>(rank + 1) + static_cast<std::uint64_t>(i);
  }
  std::vector<std::uint64_t> out(static_cast<std::size_t>(count), 0);
  int rc = MPI_SUCCESS;
  switch (c) {
    case cb::Collective::AllReduce:
      rc = MPI_Allreduce(in.data(), out.data(), count, MPI_UINT64_T, op, comm);
      break;
    case cb::Collective::Reduce:
      rc = MPI_Reduce(in.data(), out.data(), count, MPI_UINT64_T, op, 0, comm);
      break;
    case cb::Collective::ReduceScatter:
      rc = MPI_Reduce_scatter_block(in.data(), out.data(), count, MPI_UINT64_T, op, comm);
      break;
    default:
      std::fprintf(stderr, "unsupported collective\n");
      MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (rc != MPI_SUCCESS) {
    if (!error) {
      std::fprintf(stderr, "collective failed on rank %d\n", rank);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    *error = std::string(text, static_cast<std::size_t>(len));
    for (auto& ch : *error) {
      if (ch == '\n') ch = ' ';
    }
    return 0;
  }
  std::uint64_t mine = fnv1a(out, 1469598103934665603ull);
  std::vector<std::uint64_t> all(static_cast<std::size_t>(size));
  MPI_Gather(&mine, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, 0, comm);
  return fnv1a(all, 1469598103934665603ull);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s allreduce|reduce|reduce_scatter COUNT [--as-launched]\n",
                 argv[0]);
    return 2;
  }
  auto c = cb::parse_collective(argv[1]);
  const int count = std::atoi(argv[2]);
  const bool as_launched = argc > 3 && std::strcmp(argv[3], "--as-launched") == 0;
  const char* refuse = argc > 4 && std::strcmp(argv[3], "--refuse") == 0 ? argv[4] : nullptr;
  cb::mpi::ensure_initialized();
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Op op;
  MPI_Op_create(order_sensitive, /*commute=*/1, &op);

  if (refuse) {
    cb::mpi::AlgorithmSelector selector;
    MPI_Comm comm = selector.duplicate_for(*c, refuse);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    auto choice = selector.mpich_choice(*c, refuse);
    if (choice) cb::mpi::activate(*choice);
    std::string error;
    std::uint64_t h = run_once(*c, comm, op, count, &error);
    cb::mpi::restore_default_algorithms();
    if (rank == 0) {
      if (error.empty()) {
        std::printf("accepted %016llx\n", static_cast<unsigned long long>(h));
      } else {
        std::printf("refused %s\n", error.c_str());
      }
    }
    MPI_Comm_free(&comm);
  } else if (as_launched) {
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    std::uint64_t h = run_once(*c, dup, op, count);
    if (rank == 0) std::printf("launched %016llx\n", static_cast<unsigned long long>(h));
    MPI_Comm_free(&dup);
  } else {
    cb::mpi::AlgorithmSelector selector;
    if (!selector.unavailable().empty()) {
      if (rank == 0) std::printf("unavailable %s\n", selector.unavailable().c_str());
    }
    std::vector<std::string> algorithms = {"default"};
    for (const auto& a : selector.algorithms(*c)) algorithms.push_back(a);
    for (const auto& a : algorithms) {
      cb::mpi::CallTraits t;
      t.collective = *c;
      t.nranks = size;
      t.count = static_cast<std::uint64_t>(count);
      t.type_size = sizeof(std::uint64_t);
      t.builtin_op = false;
      std::string why = cb::mpi::inapplicable_reason(selector.flavor(), a, t);
      if (!why.empty()) {
        if (rank == 0) std::printf("%s skipped %s\n", a.c_str(), why.c_str());
        continue;
      }
      MPI_Comm comm = selector.duplicate_for(*c, a);
      auto choice = selector.mpich_choice(*c, a);
      if (choice) cb::mpi::activate(*choice);
      std::uint64_t h = run_once(*c, comm, op, count);
      cb::mpi::restore_default_algorithms();
      if (rank == 0) std::printf("%s %016llx\n", a.c_str(), static_cast<unsigned long long>(h));
      MPI_Comm_free(&comm);
    }
  }
  MPI_Op_free(&op);
  return 0;
}
