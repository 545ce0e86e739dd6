// One collective call prepared for Gloo: options objects and legacy algorithm instances are
// built once per (buffers, count, type, op, root, placement) and then run back to back, as
// Gloo's own benchmark does, so construction stays out of the timed iterations.
#pragma once

#include <gloo/context.h>

#include <chrono>
#include <memory>
#include <string>

#include "collectives/backend.hpp"

namespace cb::gloo_backend {

class PreparedOp {
 public:
  virtual ~PreparedOp() = default;
  virtual void run() = 0;
};

struct GlooCallSite {
  std::shared_ptr<::gloo::Context> context;
  std::chrono::milliseconds timeout;
  std::uint32_t tag;  // unique per communicator
};

// `algorithm` is "default" or a name from gloo_algorithms(call.collective).
std::unique_ptr<PreparedOp> prepare(const GlooCallSite& site, const std::string& algorithm,
                                    const CollectiveCall& call);

}  // namespace cb::gloo_backend
