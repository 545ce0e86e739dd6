// `commbench replay`: run's launch, backend, step and output flags (rows of run_flags()) and
// replay's own -> jobs/replay (a training step's communication replayed with overlap).
#include <memory>

#include "cmd/run.hpp"
#include "cmd/subcommands.hpp"
#include "collectives/patterns/presets.hpp"
#include "jobs/replay.hpp"

namespace cb {

void register_replay(CLI::App& app, Action& action) {
  auto rq = std::make_shared<RunRequest>();
  auto pq = std::make_shared<ReplayRequest>();
  CLI::App* cmd = app.add_subcommand(
      "replay",
      "a training step's communication (DDP buckets, FSDP gathers) overlapped with its compute: "
      "how much of it is exposed");
  std::string presets;
  for (const auto& p : model_presets())
    presets += (presets.empty() ? "" : ", ") + std::string(p.name);
  cmd->add_option("--model", pq->model,
                  "CSV of the model's parameters: name,dtype,numel[,backward_us][,unit] in "
                  "model.parameters() order");
  cmd->add_option("--preset", pq->preset, "a built-in model: " + presets);
  cmd->add_option("--pattern", pq->pattern, "ddp (gradient buckets) or fsdp (full shard)");
  cmd->add_option("--bucket-cap-mb", pq->bucket_cap_mb,
                  "DDP's bucket_cap_mb in MiB, or a list to sweep (default 25)");
  cmd->add_option("--first-bucket-mb", pq->first_bucket_mb,
                  "DDP's first bucket in MiB (default 1)");
  cmd->add_option("--backward-us-per-mparam", pq->backward_rate,
                  "backward compute: microseconds per million parameters");
  cmd->add_option("--backward-ms", pq->backward_ms,
                  "backward compute: milliseconds per step in all, spread over the parameters");
  cmd->add_option("--forward-ratio", pq->forward_ratio,
                  "fsdp: forward compute per unit, as a fraction of its backward (default 0.5)");
  cmd->add_option("--param-dtype", pq->param_dtype,
                  "cast every parameter to this dtype (float, bfloat16, half, ...)");
  cmd->add_option("--rounds", pq->rounds,
                  "launches, each measuring every setting (default 5 with several bucket caps, "
                  "else 1)");
  cmd->add_option("--min-gain", pq->min_gain,
                  "percent a bucket cap's step must beat the reference cap's by (default 2)");
  cmd->add_flag("--dry-run", pq->dry_run,
                "print each setting's collectives (DDP's buckets, FSDP's units) with their "
                "parameters, and run nothing");
  add_run_options(cmd, *rq, replay_takes_run_flag,
                  {{"--warmup", "untimed steps before the timed ones (default 3)"},
                   {"--iters", "timed steps per setting (default 10)"},
                   {"--check", "validate every collective of the step exactly (default on)"},
                   {"--format", "stdout format: table, csv, json (default table)"},
                   {"--output", "also write FILE (.txt .csv .json); repeatable"}});
  cmd->callback([rq, pq, &action] {
    replay_plan(*rq, *pq);  // every value checked before anything runs
    action = [rq, pq] { return cb::replay(*rq, *pq); };
  });
}

}  // namespace cb
