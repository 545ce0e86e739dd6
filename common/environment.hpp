// Names of environment variables that say nothing about how communication was steered.
#pragma once

#include <string_view>

namespace cb {

// Variables a launcher sets per job (ids, URIs, session directories): they differ on every run.
inline constexpr std::string_view kLauncherBookkeeping[] = {
    "OMPI_MCA_orte_", "OMPI_MCA_ess", "OMPI_MCA_pmix", "OMPI_MCA_initial_wdir",
    "OMPI_MCA_shmem_RUNTIME_QUERY_hint"};

// True when `name` starts with one of kLauncherBookkeeping.
inline bool launcher_bookkeeping(std::string_view name) {
  for (auto p : kLauncherBookkeeping) {
    if (name.substr(0, p.size()) == p) return true;
  }
  return false;
}

}  // namespace cb
