// The runner: for one case, warm up, time back-to-back iterations (adaptively or a fixed
// number), combine samples across ranks, then validate outside the timed region.
#pragma once

#include <cstdint>
#include <optional>

#include "collectives/backend.hpp"
#include "collectives/engine/clock_sync.hpp"
#include "collectives/engine/lateness.hpp"
#include "collectives/engine/plan.hpp"
#include "collectives/engine/rank_times.hpp"
#include "collectives/engine/stats.hpp"
#include "collectives/engine/timing_diagnostics.hpp"
#include "collectives/engine/warmup_rule.hpp"
#include "common/record.hpp"
#include "core/watchdog.hpp"

namespace cb {

struct RunnerOptions {
  std::optional<std::uint64_t> warmup;  // fixed warm-up iterations; adaptive when empty
  std::optional<std::uint64_t> iters;   // fixed timed iterations; adaptive when empty
  double budget_s = 0.05;               // adaptive time budget per case (--min-time)
  bool check = true;
  double target_rse = 0.01;  // stop once the mean is known to 1 % (relative standard error)
  std::uint64_t min_iters = 5;
  std::uint64_t max_iters = 200000;
  // Adaptive warm-up (collectives/engine/warmup_rule.hpp): settled batches end it once a fifth of
  // the budget or max_warmup iterations are done; it never runs past kWarmupBoundBudgets budgets
  // or warmup_bound_iters.
  std::uint64_t max_warmup = 1000;
  std::uint64_t warmup_bound_iters = 10000;
};

struct Measurement {
  std::uint64_t iters = 0;
  double time_us = 0;  // mean per iteration, slowest rank
  SampleStats stats;   // of per-iteration samples, each the max over ranks
  std::optional<std::uint64_t> wrong;
  RankTimes rank_time;  // each rank's mean per iteration; its max is time_us
  // Bytes page-faulted in per timed call, the most of any rank (ResultRecord::fault_bytes).
  std::optional<double> fault_bytes;
  // Why the slow iterations were slow, where commbench can tell (outlier_cause.hpp).
  std::string outlier_cause;
  // When every process entered and left the stamped calls, and what their waiting cost
  // (collectives/engine/lateness.hpp); no ranks where not judged.
  LatenessCase lateness;
};

class Runner {
 public:
  // Allocates the largest buffers `cases` need once, in the backend's memory.
  Runner(Backend& backend, Control& control, Watchdog& watchdog, RunnerOptions options,
         const std::vector<Case>& cases);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  Measurement run(Communicator& comm, const Case& c, std::uint64_t case_index);
  // The call `run` issues for `c`: for alltoallv, with this process's blocks of c's matrix,
  // made here once per case (every rank calls this together: the ranks check they computed the
  // same matrix).
  CollectiveCall prepare(Communicator& comm, const Case& c);

 private:
  CollectiveCall call_for(const Case& c) const;
  // Times n back-to-back iterations as a whole; with `stamp`, also each one (a clock read after
  // each), appended to `samples` when given, and each call's entry and exit to `stamps`.
  double run_batch(Communicator& comm, const CollectiveCall& call, std::uint64_t n,
                   IterationTimer* timer, std::vector<double>* samples, bool stamp = true,
                   std::vector<CallStamps>* stamps = nullptr);
  // Every process's lateness over the stamped batches of case `c` (collective).
  LatenessCase judge_lateness(Communicator& comm, const Case& c,
                              const std::vector<CallStamps>& batches, const ClockLine& line);
  // Warms up; returns why it ended, and the last batch's time per iteration and median.
  WarmupOutcome warm_up(Communicator& comm, const CollectiveCall& call, double* per_iter_us,
                        double* typical_us);
  // Validates `call` (collectives/engine/call_validation.hpp) between two watchdog steps.
  std::optional<std::uint64_t> validate(Communicator& comm, const CollectiveCall& call,
                                        std::uint64_t seed);

  Backend& backend_;
  Control& control_;
  Watchdog& watchdog_;
  RunnerOptions options_;
  Memory& memory_;
  BufferNeeds needs_;
  std::vector<RankPlace> places_;  // where every process runs, in control-channel order
  ClockSync clocks_;               // every process's clock against rank 0's
  void* send_ = nullptr;
  void* recv_ = nullptr;
  std::unique_ptr<VBlocks> blocks_;  // alltoallv: the case prepared last
  std::optional<Case> blocks_for_;
  std::uint64_t progress_ = 0;
  double batch_fault_bytes_ = 0;  // what the last run_batch faulted in while timed, this rank
  double batch_preemptions_ = 0;  // times this rank's thread was switched out in it, likewise
  std::unique_ptr<TimingDiagnostics> diagnostics_;  // COMMBENCH_DIAGNOSTICS
};

// The record for a measured case (timings, sizes, bandwidths).
ResultRecord make_record(const Backend& backend, const Case& c, const Measurement& m, int nnodes);
// "allreduce 4 MiB float sum" — how messages name a case.
std::string describe(const Case& c);

}  // namespace cb
