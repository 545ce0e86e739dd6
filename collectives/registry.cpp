#include "collectives/registry.hpp"

#include <fmt/ranges.h>

#include "collectives/mpi/mpi_backend.hpp"
#include "collectives/mpi/mpi_cuda_aware.hpp"
#include "collectives/nccl/nccl_backend.hpp"
#include "common/error.hpp"
#ifdef COMMBENCH_HAVE_GLOO
#include "collectives/gloo/gloo_backend.hpp"
#endif

namespace cb {

const std::vector<BackendEntry>& backend_registry() {
  static const std::vector<BackendEntry> kEntries = {
      {"mpi", "MPI collectives on host memory (device memory with a CUDA-aware MPI)",
       [](const BackendOptions&) { return std::string(); },
       [](const BackendOptions& o) { return mpi::make_backend(mpi::make_memory(o)); }},
#ifdef COMMBENCH_HAVE_GLOO
      {"gloo", "Gloo collectives over TCP on host memory",
       [](const BackendOptions&) { return std::string(); },
       [](const BackendOptions& o) { return gloo_backend::make_backend(o); }},
#endif
      // Built with or without CUDA; without, it reports that (collectives/nccl/no_cuda.cpp).
      {"nccl", "NCCL collectives on GPU memory (libnccl loaded at run time)",
       nccl::unavailable_reason, nccl::make_backend},
  };
  return kEntries;
}

const BackendEntry* find_backend(const std::string& name) {
  for (const auto& e : backend_registry()) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

std::string backend_names() {
  std::vector<std::string> names;
  for (const auto& e : backend_registry()) names.push_back(e.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string why_unavailable(const BackendEntry& entry, const BackendOptions& options) {
  try {
    return entry.unavailable_reason(options);
  } catch (const Error& e) {
    return e.what();
  }
}

}  // namespace cb
