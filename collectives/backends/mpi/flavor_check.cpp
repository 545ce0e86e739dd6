#include "collectives/backends/mpi/flavor_check.hpp"

#include <fmt/format.h>

namespace cb {

std::string launcher_flavor_from_env(const std::function<const char*(const char*)>& get_env) {
  auto set = [&](const char* name) {
    const char* v = get_env(name);
    return v != nullptr && *v != '\0';
  };
  if (set("OMPI_COMM_WORLD_SIZE")) return "Open MPI's launcher";
  if (set("PMIX_RANK")) return "a PMIx launcher";
  if (set("PMI_SIZE") || set("PMI_RANK")) return "MPICH's launcher";
  return "";
}

std::string flavor_mismatch(int world_size, int launcher_size, const std::string& launcher_flavor,
                            const std::string& library) {
  if (world_size == launcher_size || launcher_size <= 1) return "";
  const std::string launcher =
      launcher_flavor.empty() ? std::string("the launcher") : launcher_flavor;
  return fmt::format(
      "{} started {} ranks, but this commbench is built with {}, which made each rank a world of "
      "{}: the MPI flavours differ; start it with the launcher of {}",
      launcher, launcher_size, library, world_size, library);
}

}  // namespace cb
