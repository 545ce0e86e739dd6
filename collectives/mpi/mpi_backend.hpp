#pragma once

#include <memory>

#include "collectives/backend.hpp"

namespace cb::mpi {

// The MPI backend over MPI_COMM_WORLD; initialises MPI if needed.
std::unique_ptr<Backend> make_backend();

}  // namespace cb::mpi
