#include "app/run_plan.hpp"

#include <algorithm>
#include <cstdint>
#include <sstream>

#include "collectives/backends/registry.hpp"
#include "collectives/catalogue/names.hpp"
#include "common/error.hpp"
#include "common/output_path.hpp"
#include "common/units.hpp"
#include "core/process_start.hpp"
#include "launch/job.hpp"
#include "launch/mpi_relaunch.hpp"
#include "launch/start.hpp"
#include "report/format/writer.hpp"

namespace cb {

namespace {

std::uint64_t positive_count(const std::string& text, const char* what, bool allow_zero) {
  std::int64_t v = parse_int(text, what);
  if (v < 0 || (!allow_zero && v == 0)) {
    usage_error("invalid {} '{}': expected a {} integer", what, text,
                allow_zero ? "non-negative" : "positive");
  }
  return static_cast<std::uint64_t>(v);
}

// Iteration counts: at most 10^7 (the per-iteration samples of 10^7 iterations take 80 MB).
constexpr std::uint64_t kMaxIterations = 10'000'000;
// Durations: at most 10^6 s (11.6 days); the libraries' timeouts count milliseconds in 32 bits.
constexpr double kMaxSeconds = 1e6;

std::uint64_t bounded_count(const std::string& text, const char* what, bool allow_zero) {
  std::uint64_t v = positive_count(text, what, allow_zero);
  if (v > kMaxIterations) usage_error("invalid {} '{}': at most {}", what, text, kMaxIterations);
  return v;
}

double bounded_seconds(const std::string& text, const char* what) {
  double v = parse_double(text, what);
  if (v <= 0 || v > kMaxSeconds) {
    usage_error("invalid {} '{}': expected seconds > 0 and at most {:g}", what, text, kMaxSeconds);
  }
  return v;
}

// What is measured: collectives, algorithms, dtypes, ops, placements, roots, memory.
void sweep_settings(const RunRequest& rq, RunPlan& p) {
  p.sweep.collectives = parse_collectives(rq.collectives);
  p.sweep.algorithms = split_list(rq.algorithms);
  if (p.sweep.algorithms.empty())
    usage_error("empty --algorithms list: expected default, all or names");
  p.sweep.dtypes = parse_dtypes(rq.dtypes);
  p.sweep.ops = parse_ops(rq.ops);
  p.sweep.placements = parse_placement(rq.placement);
  p.sweep.root = parse_root(rq.root, p.sweep.all_roots);
  if (rq.memory.empty() || rq.memory == "host") {
    p.memory = MemoryKind::Host;
  } else if (rq.memory == "device") {
    p.memory = MemoryKind::Device;
  } else {
    usage_error("invalid --memory '{}': expected host or device", rq.memory);
  }
  p.memory_given = !rq.memory.empty();
}

// The sizes: -b, -e (whose default depends on the memory), -f, -i.
void size_settings(const RunRequest& rq, RunPlan& p) {
  p.sweep.min_bytes = parse_size(rq.min_bytes, "--min-bytes");
  p.max_bytes_given = !rq.max_bytes.empty();
  if (p.max_bytes_given) {
    p.sweep.max_bytes = parse_size(rq.max_bytes, "--max-bytes");
  } else {
    p.sweep.max_bytes = p.memory == MemoryKind::Device ? (1ULL << 30) : (64ULL << 20);
    p.sweep.max_bytes = std::max(p.sweep.max_bytes, p.sweep.min_bytes);
  }
  p.sweep.step_factor = parse_double(rq.step_factor, "--step-factor");
  if (!rq.step_bytes.empty()) {
    p.sweep.step_bytes = parse_size(rq.step_bytes, "--step-bytes");
    if (p.sweep.step_bytes == 0) usage_error("invalid --step-bytes '0': expected a positive size");
  }
  sweep_sizes(p.sweep);  // checks min <= max and the step
}

// Timing, the watchdog, progress, ranks, the backends' own flags and --gpus.
void timing_settings(const RunRequest& rq, RunPlan& p) {
  // Every iteration keeps a sample, so the counts are bounded before anything is allocated.
  if (!rq.warmup.empty()) p.runner.warmup = bounded_count(rq.warmup, "--warmup", true);
  if (!rq.iters.empty()) p.runner.iters = bounded_count(rq.iters, "--iters", false);
  p.runner.budget_s = bounded_seconds(rq.min_time, "--min-time");
  p.runner.check = rq.check;
  p.timeout = bounded_seconds(rq.timeout, "--timeout");
  if (rq.progress != "auto" && rq.progress != "always" && rq.progress != "never") {
    usage_error("invalid --progress '{}': expected auto, always or never", rq.progress);
  }
  p.progress = rq.progress;
  if (!rq.nranks.empty()) {
    const std::uint64_t n = positive_count(rq.nranks, "--nranks", false);
    if (n > 1024) usage_error("invalid --nranks '{}': at most 1024 local ranks", rq.nranks);
    p.nranks = static_cast<int>(n);
  }
  BackendOptions flags;
  flags.flags = rq.backend_flags;
  check_backend_options(flags);
  p.backend_flags = rq.backend_flags;
  if (!rq.gpus.empty()) p.gpus = static_cast<int>(positive_count(rq.gpus, "--gpus", false));
}

// The outputs, --format and --repeat.
void output_settings(const RunRequest& rq, RunPlan& p) {
  for (const auto& path : rq.outputs) check_output_path(path);
  std::ostringstream probe_format;
  make_stream_writer(rq.format, probe_format);  // validates --format before any work
  p.format = rq.format;
  p.outputs = rq.outputs;
  const std::uint64_t n = positive_count(rq.repeat, "--repeat", false);
  if (n > 1000) usage_error("invalid --repeat '{}': at most 1000 repetitions", rq.repeat);
  p.repeat = static_cast<int>(n);
  check_distinct_outputs(p.outputs);
}

// -B as given: known names, duplicates dropped, and each backend's checks of the run's choices.
// Without -B the backends are chosen where the ranks run (rank_run), which checks them there.
void backend_settings(const RunRequest& rq, RunPlan& p) {
  if (rq.backends.empty()) return;
  BackendOptions bo;
  p.backends = resolve_backends(split_list(rq.backends), true, bo).names;
  check_run_choices({p.backends, p.memory, p.memory_given, p.gpus});
}

// Fresh jobs: refused under mpirun/srun; --launch's prefix in words, its launcher known.
void job_settings(const RunRequest& rq, RunPlan& p, const char* jobs_for) {
  if (!jobs_for && !p.in_jobs() && rq.launch.empty()) return;
  const char* what = jobs_for ? jobs_for : p.repeat > 1 ? "--repeat" : "--launch";
  if (detect_launch().kind != LaunchInfo::Kind::Single) {
    usage_error(
        "{} starts a fresh job per launch and cannot run under mpirun/srun: run commbench "
        "directly, and give your launcher with --launch 'PREFIX'",
        what);
  }
  if (!rq.launch.empty()) {
    p.launch = split_command(rq.launch);
    launcher_kind(p.launch.front(), build_mpi_flavor());
    check_launcher_exists(p.launch.front());
  }
  p.job_arguments = run_arguments(rq);
}

}  // namespace

RunPlan plan_run(const RunRequest& rq, const char* jobs_for) {
  RunPlan p;
  sweep_settings(rq, p);
  size_settings(rq, p);
  timing_settings(rq, p);
  p.roof = parse_roof_inputs(rq.roof_link_gbps, rq.roof_host_memory);
  output_settings(rq, p);
  backend_settings(rq, p);
  job_settings(rq, p, jobs_for);
  return p;
}

int wanted_ranks(const RunPlan& plan) {
  // -N defaults to one rank per GPU, so --gpus G makes it one rank per G GPUs.
  return plan.nranks ? *plan.nranks : std::max(1, default_local_ranks() / plan.gpus);
}

}  // namespace cb
