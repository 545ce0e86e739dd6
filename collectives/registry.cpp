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

BackendChoice default_backends(const LaunchInfo& launch, const BackendOptions& options) {
  auto reason = [&](const char* name) {
    const BackendEntry* e = find_backend(name);
    return e ? why_unavailable(*e, options) : std::string("not in this build");
  };
  const bool mpi_can_start = launch.kind != LaunchInfo::Kind::Local;
  BackendChoice c;
  if (reason("nccl").empty()) {
    c.names = {"nccl"};
    c.why =
        "a GPU is visible and NCCL loads (with a CUDA-aware MPI, -B nccl,mpi --memory device "
        "puts MPI beside it)";
    return c;
  }
  for (const char* name : {"mpi", "gloo"}) {
    if (!reason(name).empty() || (std::string(name) == "mpi" && !mpi_can_start)) continue;
    c.names.push_back(name);
  }
  if (c.names.empty()) c.names.push_back("mpi");
  c.why = fmt::format("no GPU backend here (nccl: {}), so every CPU backend side by side",
                      reason("nccl"));
  if (!mpi_can_start) c.why = "ranks started by the local launcher run gloo only";
  return c;
}

std::string why_unavailable(const BackendEntry& entry, const BackendOptions& options) {
  try {
    return entry.unavailable_reason(options);
  } catch (const Error& e) {
    return e.what();
  }
}

}  // namespace cb
