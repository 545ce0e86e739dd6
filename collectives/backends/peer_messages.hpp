// Messages between two ranks on a backend's own network transport and buffers, apart from its
// collectives: what `probe links --transport NAME` times one HCA with (NCCL send/recv between the
// ranks' GPUs). A backend offers them in its registry entry (peer_messages); nothing outside its
// folder calls its library.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/control.hpp"

namespace cb {

// Operations are queued in order and complete at wait(); both ranks of a pair queue theirs.
class PeerMessages {
 public:
  virtual ~PeerMessages() = default;
  // Makes the message buffer hold at least `bytes` (outside any timed stretch).
  virtual void reserve(std::uint64_t bytes) = 0;
  // `count` messages of `bytes` each from the message buffer to `peer`, queued as one group.
  virtual void send(int peer, std::uint64_t count, std::uint64_t bytes) = 0;
  // `count` messages of `bytes` each from `peer` into the message buffer, queued as one group.
  virtual void recv(int peer, std::uint64_t count, std::uint64_t bytes) = 0;
  // One 8-byte message to or from `peer` (an acknowledgement, a ping), apart from the buffer.
  virtual void send_word(int peer) = 0;
  virtual void recv_word(int peer) = 0;
  // Waits until everything queued has completed; a runtime Error naming `what` when it failed,
  // or when it made no progress for so long that the peer or the link is taken to be gone.
  virtual void wait(const char* what) = 0;
};

struct PeerMessagesOffer {
  // Why this process cannot send them (no device is visible); empty when it can.
  std::function<std::string()> unavailable;
  // Every rank of `control` opens them together; `local_rank` picks this rank's device among
  // the visible ones. Throws a runtime Error naming the library's reason when it cannot.
  std::function<std::unique_ptr<PeerMessages>(Control& control, int local_rank)> open;
};

}  // namespace cb
