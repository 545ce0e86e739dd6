// The run's control channel over Gloo, for ranks started by the local launcher (rendezvous
// through a FileStore in the launcher's private directory) or by an env:// launcher (through the
// rendezvous star, launch/env_rendezvous.hpp): Gloo collectives on a full mesh of
// its own, separate from any communicator being measured.
#pragma once

#include <memory>
#include <string>

#include "collectives/backend.hpp"

namespace cb::gloo_backend {

std::unique_ptr<Control> make_file_store_control(const std::string& store_dir, int rank, int size,
                                                 double timeout_seconds);

// Over `rendezvous` (a control channel good for allgathers), this rank listening at `address`
// (an IPv4 address the other ranks reach).
std::unique_ptr<Control> make_rendezvous_control(Control& rendezvous, const std::string& address,
                                                 double timeout_seconds);

}  // namespace cb::gloo_backend
