#include "collectives/backends/nccl/p2p_plan.hpp"

namespace cb::nccl {

std::vector<P2pCall> alltoallv_calls(const RankBlocks& b, std::size_t element_size) {
  std::vector<P2pCall> out;
  for (std::size_t peer = 0; peer < b.send_counts.size(); ++peer) {
    const int p = static_cast<int>(peer);
    if (b.send_counts[peer] > 0) {
      out.push_back({true, p, b.send_displs[peer] * element_size, b.send_counts[peer]});
    }
    if (b.recv_counts[peer] > 0) {
      out.push_back({false, p, b.recv_displs[peer] * element_size, b.recv_counts[peer]});
    }
  }
  return out;
}

}  // namespace cb::nccl
