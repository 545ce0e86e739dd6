// Builds without CUDA: `probe links --transport nccl` is refused before anything runs.
#include "common/error.hpp"
#include "probes/links_transport.hpp"

namespace cb {

bool nccl_transport_built() {
  return false;
}

std::unique_ptr<PairTransport> nccl_transport(Control&, int) {
  usage_error("--transport nccl: this commbench was built without CUDA, so it has no NCCL");
}

}  // namespace cb
