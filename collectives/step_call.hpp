// The call one op of a step program makes with the program's buffers: how the host's step
// driver, a backend's own and replay's validation issue the same collective.
#pragma once

#include <vector>

#include "collectives/backend.hpp"
#include "collectives/patterns/step_program.hpp"

namespace cb {

inline CollectiveCall step_call(const StepOp& op, const std::vector<void*>& buffers) {
  CollectiveCall c{};
  c.collective = op.collective;
  c.dtype = op.dtype;
  c.op = info(op.collective).reduces ? ReduceOp::Sum : ReduceOp::None;
  c.placement = op.placement;
  c.root = 0;
  c.count = op.count;
  c.send = op.send >= 0 ? buffers.at(static_cast<std::size_t>(op.send)) : nullptr;
  c.recv = buffers.at(static_cast<std::size_t>(op.recv));
  return c;
}

}  // namespace cb
