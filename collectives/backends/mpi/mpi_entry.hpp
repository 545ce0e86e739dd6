// The mpi backend as the registry lists it (Open MPI or MPICH): its one line in registry.cpp.
#pragma once

#include "collectives/backends/backend_entry.hpp"

namespace cb {

BackendEntry mpi_entry();

}  // namespace cb
