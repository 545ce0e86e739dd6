// Gloo's TCP transport: which address ranks listen on, and connecting a full mesh of ranks
// through a rendezvous store.
#pragma once

#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/device.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "collectives/backend.hpp"

namespace cb::gloo_backend {

struct TransportChoice {
  std::string iface;     // listen on this interface's IPv4 address, or
  std::string hostname;  // on this name's address
  std::string reason;    // how it was chosen, when not named by the user ("route to rank 0 ...")
  std::string describe() const;
};

// `iface` from --gloo-iface, or loopback (empty: every rank is on this host). Throws a usage
// Error for an unknown interface.
TransportChoice choose_transport(const std::string& iface);

// Ranks on several hosts and no --gloo-iface: every rank listens on its local address on the
// route to one of rank 0's addresses, agreed over the control channel (collective over
// `control`). Throws a usage Error naming the host when a rank reaches none of them.
TransportChoice choose_transport_by_route(Control& control, const std::vector<std::string>& hosts);

// Throws a usage Error unless `iface` exists here and has an IPv4 address.
void check_interface(const std::string& iface);

// Interface names on this host, "lo, eth0".
std::string interface_names();

// One device per address in this process, shared by whoever asks while it lives (the control
// channel and the backend): every Gloo TCP device runs an event thread that wakes every 10 ms,
// so a second device would add as many wake-ups to every timed batch.
std::shared_ptr<::gloo::transport::Device> make_device(const TransportChoice& choice);

// A context connected to every other rank; `timeout` bounds the rendezvous and every later
// operation on the context.
std::shared_ptr<::gloo::rendezvous::Context> connect(
    ::gloo::rendezvous::Store& store, std::shared_ptr<::gloo::transport::Device>& device, int rank,
    int size, std::chrono::milliseconds timeout);

// --timeout in seconds as Gloo's timeout: longer than the watchdog can take (twice --timeout when
// a rank stops inside a long batch), so a rank that stops making progress is reported as a
// timeout (exit 4) rather than as a Gloo I/O error.
std::chrono::milliseconds gloo_timeout(double timeout_seconds);

}  // namespace cb::gloo_backend
