#include "collectives/engine/warmup_rule.hpp"

#include <algorithm>
#include <cmath>

namespace cb {

std::string_view name(WarmupEnd e) {
  switch (e) {
    case WarmupEnd::Running:
      return "running";
    case WarmupEnd::Settled:
      return "settled";
    case WarmupEnd::FaultsEveryCall:
      return "faults on every call";
    case WarmupEnd::Bound:
      return "bound";
  }
  return "running";
}

bool WarmupRule::time_stopped_falling() const {
  if (batches_.size() < 2) return false;  // the first batch holds the first, slow call
  const double last = batches_.back().p50_us;
  const double before = batches_[batches_.size() - 2].p50_us;
  return last >= kWarmupStillFalling * before;
}

bool WarmupRule::faults_every_call() const {
  if (batches_.size() < kWarmupFaultingBatches) return false;
  double lo = INFINITY, hi = 0;
  std::uint64_t calls = 0;
  for (auto b = batches_.end() - kWarmupFaultingBatches; b != batches_.end(); ++b) {
    if (b->fault_bytes <= 0) return false;
    lo = std::min(lo, b->fault_bytes);
    hi = std::max(hi, b->fault_bytes);
    calls += b->iters;
  }
  return calls >= kWarmupFaultingCalls && hi <= kWarmupSteadyFaults * lo;
}

std::uint64_t WarmupRule::next(const WarmupBatch& b) {
  batches_.push_back(b);
  done_ += b.iters;
  spent_us_ += b.total_us;
  const bool enough = spent_us_ >= limits_.min_us || done_ >= limits_.min_iters;
  if (enough && b.fault_bytes <= 0 && time_stopped_falling()) {
    end_ = WarmupEnd::Settled;
  } else if (enough && faults_every_call()) {
    end_ = WarmupEnd::FaultsEveryCall;
  } else if (spent_us_ >= limits_.max_us || done_ >= limits_.max_iters) {
    end_ = WarmupEnd::Bound;
  }
  if (end_ != WarmupEnd::Running) return 0;
  // Doubling, but never past the bounds: the next batch fits in the time and iterations left.
  const double per_iter = b.iters ? b.total_us / static_cast<double>(b.iters) : 0;
  std::uint64_t n = b.iters * 2;
  if (per_iter > 0) {
    const double fits = std::floor((limits_.max_us - spent_us_) / per_iter);
    n = std::min(n, static_cast<std::uint64_t>(std::max(fits, 1.0)));
  }
  return std::clamp<std::uint64_t>(n, 1, limits_.max_iters - done_);
}

}  // namespace cb
