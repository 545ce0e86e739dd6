// `probe links` over TCP pinned to one NIC: every participant listens on its address of that
// NIC, and each connection is made from that NIC's address (and bound to the device where the
// kernel allows), so a pass measures one rail and nothing else.
#pragma once

#include <memory>
#include <string>

#include "probes/links_transport.hpp"

namespace cb {

// Collective over every rank of `control`: participants listen on their address of `nic`
// (`address`), and every rank learns every participant's endpoint. Bandwidth samples report the
// bytes the receiver's kernel acknowledged (TCP_INFO's bytes_acked) over the sample's time; a
// direction streams without pause and is reset (not drained) when its last sample ends, so it
// takes at most phase_bound_seconds whatever the link does. A pair that cannot connect within
// that time measures 0 GB/s.
std::unique_ptr<PairTransport> tcp_transport(Control& control, const std::string& nic,
                                             const std::string& address, bool participant);

}  // namespace cb
