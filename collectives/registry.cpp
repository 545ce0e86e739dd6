#include "collectives/registry.hpp"

#include "collectives/mpi/mpi_backend.hpp"

namespace cb {

const std::vector<BackendEntry>& backend_registry() {
  static const std::vector<BackendEntry> kEntries = {
      {"mpi", "MPI collectives on host memory",
       [](const BackendOptions&) { return std::string(); },
       [](const BackendOptions&) { return mpi::make_backend(); }},
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
  std::string s;
  for (const auto& e : backend_registry()) s += (s.empty() ? "" : ", ") + e.name;
  return s;
}

}  // namespace cb
