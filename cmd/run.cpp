// `commbench run`: options -> plan -> runner per case -> records -> writers (rank 0).
#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <optional>

#include "cmd/options.hpp"
#include "cmd/progress.hpp"
#include "cmd/run.hpp"
#include "cmd/subcommands.hpp"
#include "cmd/version_info.hpp"
#include "collectives/engine/case_budget.hpp"
#include "collectives/launch/rank_status.hpp"
#include "collectives/launch/start.hpp"
#include "collectives/backends/registry.hpp"
#include "collectives/engine/run_meta.hpp"
#include "collectives/engine/session.hpp"
#include "common/error.hpp"
#include "common/output_path.hpp"
#include "common/temp_files.hpp"
#include "common/units.hpp"
#include "probes/roof_facts.hpp"
#include "probes/topology.hpp"
#include "report/writer.hpp"

namespace cb {

namespace {

struct Settings {
  SweepOptions sweep;
  RunnerOptions runner;
  std::vector<std::string> backends;
  std::string backend_choice;  // why these backends, when -B was not given
  MemoryKind memory = MemoryKind::Host;
  double timeout = 300;
  int gpus = 1;
};

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

Settings validate(const RunRequest& rq) {
  Settings s;
  s.sweep.collectives = parse_collectives(rq.collectives);
  s.sweep.algorithms = split_list(rq.algorithms);
  if (s.sweep.algorithms.empty())
    usage_error("empty --algorithms list: expected default, all or names");
  s.sweep.dtypes = parse_dtypes(rq.dtypes);
  s.sweep.ops = parse_ops(rq.ops);
  s.sweep.placements = parse_placement(rq.placement);
  s.sweep.root = parse_root(rq.root, s.sweep.all_roots);
  if (rq.memory.empty() || rq.memory == "host") {
    s.memory = MemoryKind::Host;
  } else if (rq.memory == "device") {
    s.memory = MemoryKind::Device;
  } else {
    usage_error("invalid --memory '{}': expected host or device", rq.memory);
  }
  s.sweep.min_bytes = parse_size(rq.min_bytes, "--min-bytes");
  if (!rq.max_bytes.empty()) {
    s.sweep.max_bytes = parse_size(rq.max_bytes, "--max-bytes");
  } else {
    s.sweep.max_bytes = s.memory == MemoryKind::Device ? (1ULL << 30) : (64ULL << 20);
    s.sweep.max_bytes = std::max(s.sweep.max_bytes, s.sweep.min_bytes);
  }
  s.sweep.step_factor = parse_double(rq.step_factor, "--step-factor");
  if (!rq.step_bytes.empty()) {
    s.sweep.step_bytes = parse_size(rq.step_bytes, "--step-bytes");
    if (s.sweep.step_bytes == 0) usage_error("invalid --step-bytes '0': expected a positive size");
  }
  sweep_sizes(s.sweep);  // checks min <= max and the step
  // Every iteration keeps a sample, so the counts are bounded before anything is allocated.
  if (!rq.warmup.empty()) s.runner.warmup = bounded_count(rq.warmup, "--warmup", true);
  if (!rq.iters.empty()) s.runner.iters = bounded_count(rq.iters, "--iters", false);
  s.runner.budget_s = bounded_seconds(rq.min_time, "--min-time");
  s.runner.check = rq.check;
  s.timeout = bounded_seconds(rq.timeout, "--timeout");
  if (rq.progress != "auto" && rq.progress != "always" && rq.progress != "never") {
    usage_error("invalid --progress '{}': expected auto, always or never", rq.progress);
  }
  if (!rq.nranks.empty() && positive_count(rq.nranks, "--nranks", false) > 1024) {
    usage_error("invalid --nranks '{}': at most 1024 local ranks", rq.nranks);
  }
  BackendOptions flags;
  flags.flags = rq.backend_flags;
  check_backend_options(flags);
  if (!rq.gpus.empty()) s.gpus = static_cast<int>(positive_count(rq.gpus, "--gpus", false));
  parse_roof_inputs(rq.roof_link_gbps, rq.roof_host_memory);
  return s;
}

}  // namespace

void check_run_request(const RunRequest& rq) {
  validate(rq);
  for (const auto& path : rq.outputs) check_output_path(path);
  std::ostringstream probe_format;
  make_stream_writer(rq.format, probe_format);  // validates --format before any work
  repeat_count(rq);
}

int repeat_count(const RunRequest& rq) {
  std::uint64_t n = positive_count(rq.repeat, "--repeat", false);
  if (n > 1000) usage_error("invalid --repeat '{}': at most 1000 repetitions", rq.repeat);
  return static_cast<int>(n);
}

int execute_run(const RunRequest& rq) {
  if (repeat_count(rq) > 1 || !rq.launch.empty()) return execute_repeated(rq);
  Settings s = validate(rq);
  for (const auto& path : rq.outputs) check_output_path(path);
  check_distinct_outputs(rq.outputs);
  std::ostringstream probe_format;
  make_stream_writer(rq.format, probe_format);  // validates --format before any work

  BackendOptions bo;
  bo.launch = detect_launch();
  bo.memory = s.memory;
  bo.memory_explicit = !rq.memory.empty();
  bo.flags = rq.backend_flags;
  bo.gpus_per_process = s.gpus;
  bo.dtypes = s.sweep.dtypes;
  bo.ops = s.sweep.ops;
  for (const auto& a : s.sweep.algorithms) bo.report_choice |= a == "default" || a == "all";
  BackendChoice choice = resolve_backends(split_list(rq.backends), !rq.backends.empty(), bo);
  s.backends = choice.names;
  s.backend_choice = choice.why;
  if (choice.device_memory && rq.memory.empty()) s.memory = bo.memory = MemoryKind::Device;
  apply_run_choices({s.backends, s.memory, !rq.memory.empty(), !rq.max_bytes.empty(), s.gpus},
                    s.sweep);

  // No launcher: start the ranks (locally, or under the MPI launcher) and report their outcome.
  // -N defaults to one rank per GPU, so --gpus G makes it one rank per G GPUs.
  const int wanted_ranks = rq.nranks.empty()
                               ? std::max(1, default_local_ranks() / s.gpus)
                               : static_cast<int>(positive_count(rq.nranks, "--nranks", false));
  if (bo.launch.kind == LaunchInfo::Kind::Single) {
    for (const auto& name : s.backends) {
      if (std::string why = find_backend(name)->unavailable_reason(bo); !why.empty()) {
        runtime_error("backend {} cannot run here: {}", name, why);
      }
    }
    // Rank 0 names its temporary output files after this process, so that they can be removed
    // here whatever ends the ranks (a kill, a crash, an interrupt).
    ::setenv(kTempTagEnv, std::to_string(::getpid()).c_str(), 0);
    for (const auto& path : rq.outputs) track_temp_file(output_target(path) + temp_suffix());
    try {
      int code = start_ranks(s.backends, wanted_ranks, rq.progress);
      if (code != 0) remove_temp_files();
      return code;
    } catch (...) {
      remove_temp_files();
      throw;
    }
  }
  if (!rq.nranks.empty() && wanted_ranks != bo.launch.size) {
    usage_error("-N {} conflicts with the {} ranks the launcher started", wanted_ranks,
                bo.launch.size);
  }

  // Under env:// no parent gathers the ranks' lines: each rank reports its own timeout.
  Watchdog watchdog(s.timeout, bo.launch.rank == 0 || bo.launch.kind == LaunchInfo::Kind::Env);
  bo.watchdog = &watchdog;
  // A timeout or an interrupt leaves no half-written output behind.
  watchdog.on_fire([] {
    remove_temp_files();
    record_rank_code(4);  // the watchdog has printed why
  });
  end_rank_cleanly_on_signals();
  watchdog.arm("start-up (control channel rendezvous)");
  std::unique_ptr<Control> control = make_run_control(bo.launch, s.timeout);
  // A rank records how it failed before unwinding closes its connections (the control channel,
  // the backends and their communicators live outside the try): its peers then fail too, and
  // the parent must see which failure came first.
  std::vector<std::unique_ptr<Backend>> backends;
  std::vector<std::vector<Case>> plans;
  std::optional<Session> session;
  try {
    const int rank = control->rank();
    bo.control = control.get();
    bo.timeout_seconds = s.timeout;

    create_backends(s.backends, bo, watchdog, backends);
    plans = plan_backends(backends, s.sweep, rank == 0);
    const RunHosts hosts = gather_hosts(*control);
    check_host_memory(*control, hosts.ranks_here, backends, plans);
    const RunMeta meta =
        assemble_run_meta(*control, hosts, backends,
                          {commbench_version(), commbench_git_commit(), bo.launch, s.backend_choice,
                           host_topology_facts("/sys", parse_roof_inputs(rq.roof_link_gbps,
                                                                         rq.roof_host_memory))
                               .dump(),
                           topology_summary});

    std::vector<std::unique_ptr<Writer>> writers;
    if (rank == 0) {
      writers.push_back(make_stdout_writer(rq.format));
      for (const auto& path : rq.outputs) writers.push_back(make_file_writer(path));
      if (rq.extra_writer) writers.push_back(rq.extra_writer());
      for (auto& w : writers) w->begin(meta);
    }
    Progress progress(rq.progress, rank == 0, planned_seconds(plans, s.runner));
    session.emplace(backends, plans, *control, watchdog, s.runner, [&](const ResultRecord& r) {
      for (auto& w : writers) w->add(r);
    });
    session->run(meta.nnodes, {[&](std::size_t done, std::size_t total, const std::string& label) {
                                 progress.update(done, total, label);
                               },
                               [&] { progress.clear(); }});
    progress.finish();
    RunMeta measured = meta;
    measured.launches = {session->launch_control()};
    for (auto& w : writers) w->update_meta(measured);
    for (auto& w : writers) w->finish();
    session->check_results();
    session->warn_if_control_moved();
    return 0;
  } catch (const Error& e) {
    if (rank_status_wanted()) record_rank_exit(exit_code(e.kind()), e.what());
    throw;
  }
}

void add_run_options(CLI::App* cmd, RunRequest& rq) {
  cmd->add_option("-c,--collectives", rq.collectives,
                  "all, or a list of allreduce, allgather, reduce_scatter, broadcast, reduce, "
                  "alltoall, gather, scatter, sendrecv, barrier");
  cmd->add_option("-B,--backends", rq.backends, "mpi, gloo, nccl (default: see README)");
  cmd->add_option("-A,--algorithms", rq.algorithms,
                  "default, all, or names from `list algorithms`");
  cmd->add_option("-b,--min-bytes", rq.min_bytes, "smallest size (8, 64K, 4M, 1G; binary)");
  cmd->add_option("-e,--max-bytes", rq.max_bytes, "largest size (default 64M host, 1G device)");
  cmd->add_option("-f,--step-factor", rq.step_factor, "multiplicative size step (default 2)");
  cmd->add_option("-i,--step-bytes", rq.step_bytes, "additive size step (overrides -f)");
  cmd->add_option("-d,--dtypes", rq.dtypes, "element types (default float), or all");
  cmd->add_option("-o,--ops", rq.ops, "sum, prod, min, max, avg, or all (default sum)");
  cmd->add_option("--placement", rq.placement, "out, in or both (default out)");
  cmd->add_option("-r,--root", rq.root, "root rank for rooted collectives, or all (default 0)");
  cmd->add_option("-w,--warmup", rq.warmup, "warm-up iterations per case (default adaptive)");
  cmd->add_option("-n,--iters", rq.iters, "fixed timed iterations per case (default adaptive)");
  cmd->add_option("--min-time", rq.min_time,
                  "adaptive time budget per case, seconds (default 0.05)");
  cmd->add_flag("--check,!--no-check", rq.check, "validate every result exactly (default on)");
  cmd->add_option("--memory", rq.memory, "host or device (default device for nccl, else host)");
  cmd->add_option("-N,--nranks", rq.nranks,
                  "ranks to start when not under mpirun/srun (default: one per GPU, else 2)");
  cmd->add_option("--timeout", rq.timeout, "watchdog seconds on set-up and each operation (300)");
  cmd->add_option("--format", rq.format,
                  "stdout format: table, csv, json, md, gbench (default table)");
  cmd->add_option("--output", rq.outputs,
                  "also write FILE (.txt .csv .json .jsonl .md .gbench.json); repeatable");
  cmd->add_option("--progress", rq.progress, "progress on stderr: auto, always, never");
  for (const auto& e : backend_registry()) {
    for (const auto& f : e.flags) cmd->add_option(f.name, rq.backend_flags[f.name], f.help);
  }
  cmd->add_option("-g,--gpus", rq.gpus, "GPUs each process drives with -B nccl (default 1)");
  cmd->add_option("--repeat", rq.repeat,
                  "run the whole sweep N times, each a separate launch; figures are medians over "
                  "repetitions (default 1)");
  cmd->add_option("--roof-link-gbps", rq.roof_link_gbps,
                  "network rate per host in Gbit/s for the roof, where sysfs cannot tell it "
                  "(virtual NICs, a throttled or emulated link)");
  cmd->add_option("--roof-host-memory", rq.roof_host_memory,
                  "host memory copy bandwidth in GB/s for the roof, or 'measure' in this launch "
                  "(default: measured once per boot and cached)");
  cmd->add_option("--launch", rq.launch,
                  "launcher prefix for each launch, e.g. 'mpirun -np 16 --hostfile hosts' or "
                  "'srun -N 2 --ntasks-per-node 8'");
}

void register_run(CLI::App& app, Action& action) {
  auto rq = std::make_shared<RunRequest>();
  CLI::App* run =
      app.add_subcommand("run", "benchmark collectives: latency, bandwidth, validation");
  add_run_options(run, *rq);
  run->callback([rq, &action] { action = [rq] { return execute_run(*rq); }; });
}

}  // namespace cb
