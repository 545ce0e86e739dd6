// MPI's process-wide state: initialised once on first use, finalised at exit.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "collectives/backend.hpp"

namespace cb::mpi {

void ensure_initialized();
bool initialized();
std::string library_version();       // "Open MPI 4.1.4", "MPICH 4.0.2"
std::string library_version_full();  // MPI_Get_library_version's first line
// For `commbench version`: "MPI: Open MPI 4.1.4 (...)"; callable before MPI_Init.
std::vector<std::string> version_lines();
// Throws a runtime Error naming `what` and MPI's message unless rc is MPI_SUCCESS.
void check(int rc, const char* what);

// The control channel over a private duplicate of MPI_COMM_WORLD.
std::unique_ptr<Control> make_control();

}  // namespace cb::mpi
