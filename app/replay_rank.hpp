// `replay` in a rank: for every backend and every setting of the plan, the step program built
// (DDP's buckets at each cap, or FSDP's units), its buffers allocated, warm-up steps, timed
// steps each combined over ranks (every figure its slowest rank's), every collective of the
// step validated, and one record per setting. The launch's control is measured as a run's is.
#pragma once

#include <string>
#include <vector>

#include "app/rank_run.hpp"
#include "collectives/patterns/backward_time.hpp"
#include "collectives/patterns/model.hpp"
#include "collectives/patterns/step_program.hpp"
#include "common/replay_record.hpp"

namespace cb {

struct ReplayPlan {
  Model model;
  std::string pattern = "ddp";  // ddp or fsdp
  std::vector<double> caps_mb;  // ddp: one setting per cap
  double first_mb = 1;          // ddp: the first bucket's limit
  ComputeModel compute;
  double forward_ratio = 0.5;  // fsdp: forward compute per unit, of its backward
  int warmup = 3;
  int steps = 10;
  bool check = true;
};

struct ReplayOutcome {
  std::vector<ReplayRecord> records;  // per backend, its settings in plan order
  RunMeta meta;                       // with this launch's control measurement
};

// Runs `plan` in this rank (every rank calls it together); a usage Error, before anything is
// allocated, when a backend cannot run the model (a dtype it does not reduce, no non-blocking
// collectives) or the buffers do not fit this host's memory.
ReplayOutcome run_replay(const ReplayPlan& plan, RankContext& ctx);

// The step programs of `plan` for `nranks` ranks, one per setting, in plan order; `caps` gets
// each one's bucket cap (ddp) or nothing.
std::vector<StepProgram> replay_programs(const ReplayPlan& plan, int nranks,
                                         std::vector<std::optional<double>>* caps = nullptr);

}  // namespace cb
