// The adaptive warm-up's rule: batches of 1, 2, 4, ... iterations until the library has reached
// its steady state — no page faults in the last batch (or faults on every call at a steady rate,
// as a library that maps its buffers afresh on each call does), and a per-iteration time that has
// stopped falling — within a stated bound (docs/method.md, Timing).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace cb {

// One warm-up batch as the ranks agreed on it (each figure the largest of any rank).
struct WarmupBatch {
  std::uint64_t iters = 0;
  double total_us = 0;     // the batch timed as a whole
  double p50_us = 0;       // its median iteration
  double fault_bytes = 0;  // memory page-faulted in per iteration during the batch
};

struct WarmupLimits {
  double min_us = 0;            // settled batches end the warm-up once this much is spent ...
  std::uint64_t min_iters = 0;  // ... or this many iterations are done
  double max_us = 0;            // the warm-up ends here whatever the batches show ...
  std::uint64_t max_iters = 0;  // ... or here
};

enum class WarmupEnd {
  Running,
  Settled,          // the last batch took no page fault and its time had stopped falling
  FaultsEveryCall,  // every one of the last batches faulted at a steady rate: the library's way
  Bound,            // the time or iteration bound came first
};

std::string_view name(WarmupEnd e);

// How a case's warm-up went: why it ended and the iterations it ran.
struct WarmupOutcome {
  WarmupEnd end = WarmupEnd::Bound;
  std::uint64_t iters = 0;
};

// The warm-up's time bound, in time budgets (--min-time): 0.5 s by default.
inline constexpr double kWarmupBoundBudgets = 10;
// A batch's median within this factor of the one before counts as no longer falling.
inline constexpr double kWarmupStillFalling = 0.95;
// Faulting batches in a row, each at a rate within kWarmupSteadyFaults of the others and together
// at least kWarmupFaultingCalls calls (1 + 2 + 4 + 8), that mark a library faulting on every call;
// fewer would also fit a library that faults in its first calls only.
inline constexpr std::size_t kWarmupFaultingBatches = 4;
inline constexpr std::uint64_t kWarmupFaultingCalls = 15;
inline constexpr double kWarmupSteadyFaults = 1.5;

class WarmupRule {
 public:
  explicit WarmupRule(WarmupLimits limits) : limits_(limits) {}

  // The size of the first batch.
  std::uint64_t first() const { return 1; }
  // Records a finished batch; returns the size of the next one, or 0 when the warm-up is over.
  std::uint64_t next(const WarmupBatch& b);

  WarmupEnd end() const { return end_; }
  std::uint64_t done() const { return done_; }
  double spent_us() const { return spent_us_; }

 private:
  bool time_stopped_falling() const;
  bool faults_every_call() const;

  WarmupLimits limits_;
  std::vector<WarmupBatch> batches_;
  std::uint64_t done_ = 0;
  double spent_us_ = 0;
  WarmupEnd end_ = WarmupEnd::Running;
};

}  // namespace cb
