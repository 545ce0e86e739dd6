#include "collectives/patterns/step_program.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace cb {

double StepProgram::compute_us() const {
  double us = 0;
  for (const auto& a : actions) {
    if (a.kind == StepAction::Kind::Compute) us += a.us;
  }
  return us;
}

namespace {

void compute(StepProgram& p, double us) {
  if (us > 0) p.actions.push_back({StepAction::Kind::Compute, us, 0});
}
void issue(StepProgram& p, std::size_t op) {
  p.actions.push_back({StepAction::Kind::Issue, 0, op});
}
void wait_for(StepProgram& p, std::size_t op) {
  p.actions.push_back({StepAction::Kind::Wait, 0, op});
}

}  // namespace

StepProgram ddp_program(const Model& model, const std::vector<DdpBucket>& buckets,
                        const std::vector<double>& backward_us) {
  StepProgram p;
  p.pattern = "ddp";
  p.channels = {Collective::AllReduce};
  const std::vector<std::size_t> ready = gradient_ready_order(model.params.size());
  std::vector<std::size_t> position(model.params.size());
  for (std::size_t k = 0; k < ready.size(); ++k) position[ready[k]] = k;
  std::vector<std::size_t> complete_at;  // per bucket: position of its last gradient
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    const DdpBucket& bucket = buckets[b];
    std::size_t last = 0;
    for (std::size_t i : bucket.params) last = std::max(last, position[i]);
    complete_at.push_back(last);
    p.buffers.push_back(bucket.bytes);
    StepOp op;
    op.collective = Collective::AllReduce;
    op.dtype = bucket.dtype;
    op.placement = Placement::In;  // DDP reduces each bucket's flat gradient in place
    op.count = bucket.numel;
    op.bytes = bucket.bytes;
    op.params = bucket.numel;
    op.tensors = bucket.params.size();
    op.channel = 0;
    op.recv = static_cast<int>(b);
    op.phase = "backward";
    op.label = fmt::format("bucket {}", b);
    op.param_indices = bucket.params;
    p.ops.push_back(std::move(op));
  }
  std::size_t next = 0;
  double pending = 0;
  for (std::size_t k = 0; k < ready.size(); ++k) {
    pending += backward_us[ready[k]];
    while (next < buckets.size() && complete_at[next] <= k) {
      compute(p, pending);
      pending = 0;
      issue(p, next++);
    }
  }
  compute(p, pending);
  return p;
}

StepProgram fsdp_program(const Model& model, const std::vector<FsdpUnit>& units,
                         const std::vector<double>& backward_us, double forward_ratio) {
  (void)model;
  StepProgram p;
  p.pattern = "fsdp";
  p.channels = {Collective::AllGather, Collective::ReduceScatter};
  const std::size_t n = units.size();
  // Per unit: buffer 2u is its padded full tensor, 2u + 1 its shard.
  std::vector<double> backward(n, 0.0);
  std::vector<std::size_t> gather_fwd(n), gather_bwd(n), scatter(n);
  auto add = [&](const FsdpUnit& u, std::size_t index, Collective c, const char* phase) {
    const std::uint64_t es = info(u.dtype).size;
    StepOp op;
    op.collective = c;
    op.dtype = u.dtype;
    op.placement = Placement::Out;
    op.count = u.shard;
    op.bytes = u.padded() * es;
    op.params = u.numel;
    op.tensors = u.params.size();
    const bool gather = c == Collective::AllGather;
    op.channel = gather ? 0 : 1;
    op.send = static_cast<int>(2 * index + (gather ? 1 : 0));
    op.recv = static_cast<int>(2 * index + (gather ? 0 : 1));
    op.phase = phase;
    op.label = "unit " + (u.name.empty() ? std::string("(root)") : u.name);
    op.param_indices = u.params;
    p.ops.push_back(std::move(op));
    return p.ops.size() - 1;
  };
  for (std::size_t u = 0; u < n; ++u) {
    const std::uint64_t es = info(units[u].dtype).size;
    p.buffers.push_back(units[u].padded() * es);
    p.buffers.push_back(units[u].shard * es);
    for (std::size_t i : units[u].params) backward[u] += backward_us[i];
  }
  // Ops are numbered in issue order, so each is created where it is first issued.
  if (n > 0) issue(p, gather_fwd[0] = add(units[0], 0, Collective::AllGather, "forward"));
  for (std::size_t u = 0; u < n; ++u) {
    if (u + 1 < n) {
      issue(p, gather_fwd[u + 1] = add(units[u + 1], u + 1, Collective::AllGather, "forward"));
    }
    wait_for(p, gather_fwd[u]);
    compute(p, forward_ratio * backward[u]);
  }
  if (n > 0)
    issue(p, gather_bwd[n - 1] = add(units[n - 1], n - 1, Collective::AllGather, "backward"));
  for (std::size_t k = n; k-- > 0;) {
    if (k > 0)
      issue(p, gather_bwd[k - 1] = add(units[k - 1], k - 1, Collective::AllGather, "backward"));
    wait_for(p, gather_bwd[k]);
    compute(p, backward[k]);
    issue(p, scatter[k] = add(units[k], k, Collective::ReduceScatter, "backward"));
  }
  return p;
}

}  // namespace cb
