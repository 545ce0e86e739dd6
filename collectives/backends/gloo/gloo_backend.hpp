#pragma once

#include <memory>
#include <string>

#include "collectives/backend.hpp"
#include "collectives/backends/backend_entry.hpp"

namespace cb::gloo_backend {

// Gloo collectives over TCP on host memory. Ranks rendezvous through options.control (MPI
// under mpirun/srun, the file-store control under the local launcher); without a control
// channel only a single rank can run (e.g. for `list`).
std::unique_ptr<Backend> make_backend(const BackendOptions& options);

// "Gloo 0.0~git20220518.5b14351" as found at build time.
std::string library_version();

}  // namespace cb::gloo_backend
