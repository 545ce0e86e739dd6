// A rank started by one MPI's launcher but built with another MPI: the launcher says the job has
// N ranks, the MPI library, which cannot talk to that launcher, makes each rank a world of its
// own, and the job would run N independent one-rank sweeps. Each rank compares the two after
// MPI_Init and refuses such a start (exit 2) naming both flavours.
#pragma once

#include <functional>
#include <string>

namespace cb {

// The launcher as its environment tells it, read before MPI_Init (which may set variables of its
// own): "Open MPI's launcher" (OMPI_COMM_WORLD_SIZE), "a PMIx launcher" (PMIX_RANK: Open MPI 5's
// prterun, srun --mpi=pmix), "MPICH's launcher" (PMI_SIZE: hydra or another PMI launcher), else
// "".
std::string launcher_flavor_from_env(const std::function<const char*(const char*)>& get_env);

// Empty when the world MPI made (`world_size`) is the launcher's (`launcher_size`); else the
// line that names both: the launcher's flavour and `library` (e.g. "Open MPI 4.1.4").
std::string flavor_mismatch(int world_size, int launcher_size, const std::string& launcher_flavor,
                            const std::string& library);

}  // namespace cb
