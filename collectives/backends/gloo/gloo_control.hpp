// The run's control channel over Gloo, for ranks started by the local launcher: rendezvous
// through a FileStore in the launcher's private directory, then Gloo collectives on a context
// of its own (separate from any communicator being measured).
#pragma once

#include <memory>
#include <string>

#include "collectives/backends/backend.hpp"

namespace cb::gloo_backend {

std::unique_ptr<Control> make_file_store_control(const std::string& store_dir, int rank, int size,
                                                 double timeout_seconds);

}  // namespace cb::gloo_backend
