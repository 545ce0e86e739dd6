// alltoallv as NCCL runs it, grouped point-to-point calls (as nccl-tests' alltoallv_perf does):
// for each peer in rank order, an ncclSend of the block for it and an ncclRecv of the block from
// it, each at its offset in the packed buffers, and no call for an empty block. Host-only, so
// that the plan is tested without a GPU; NcclCommunicator keeps it per lane while the blocks
// stay the same and issues nothing else inside the group.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "collectives/catalogue/traffic.hpp"

namespace cb::nccl {

struct P2pCall {
  bool send = false;  // ncclSend, else ncclRecv
  int peer = 0;
  std::size_t offset = 0;  // bytes from the start of the send (receive) buffer
  std::size_t count = 0;   // elements
  bool operator==(const P2pCall&) const = default;
};

std::vector<P2pCall> alltoallv_calls(const RankBlocks& b, std::size_t element_size);

}  // namespace cb::nccl
