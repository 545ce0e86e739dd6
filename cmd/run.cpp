// `commbench run`: options -> plan -> runner per case -> records -> writers (rank 0).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <set>

#include "cmd/options.hpp"
#include "cmd/progress.hpp"
#include "cmd/run.hpp"
#include "cmd/subcommands.hpp"
#include "cmd/version_info.hpp"
#ifdef COMMBENCH_HAVE_GLOO
#include "collectives/gloo/gloo_transport.hpp"
#endif
#include "collectives/case_budget.hpp"
#include "collectives/launch/rank_status.hpp"
#include "collectives/launch/start.hpp"
#include "collectives/memory_check.hpp"
#include "collectives/mpi/mpi_runtime.hpp"
#include "collectives/registry.hpp"
#include "collectives/runner.hpp"
#include "common/error.hpp"
#include "common/output_path.hpp"
#include "common/temp_files.hpp"
#include "common/units.hpp"
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

// The -B list, or the default with why it was chosen (`why` stays empty for -B).
std::vector<std::string> resolve_backends(const std::string& requested, const LaunchInfo& launch,
                                          const BackendOptions& bo, std::string& why) {
  std::vector<std::string> names;
  if (requested.empty()) {
    BackendChoice c = default_backends(launch, bo);
    why = c.why;
    return c.names;
  }
  for (const auto& n : split_list(requested)) {
    if (!find_backend(n)) {
      usage_error("unknown backend '{}': this build offers {}", n, backend_names());
    }
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  }
  if (names.empty()) usage_error("empty --backends list: this build offers {}", backend_names());
  return names;
}

// GPU options against the chosen backends; -e defaults to 1G for nccl's device memory.
void check_gpu_options(const RunRequest& rq, Settings& s) {
  const bool nccl = std::find(s.backends.begin(), s.backends.end(), "nccl") != s.backends.end();
  if (nccl && s.memory == MemoryKind::Host && !rq.memory.empty()) {
    usage_error("the nccl backend needs --memory device (its buffers live on the GPU)");
  }
  if (s.gpus > 1 && (!nccl || s.backends.size() > 1)) {
    usage_error("--gpus {} applies to the nccl backend only: use -B nccl", s.gpus);
  }
  if (nccl && rq.memory.empty() && rq.max_bytes.empty()) {
    s.sweep.max_bytes = std::max<std::uint64_t>(1ULL << 30, s.sweep.min_bytes);
  }
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
#ifdef COMMBENCH_HAVE_GLOO
  if (!rq.gloo_iface.empty()) gloo_backend::check_interface(rq.gloo_iface);
#endif
  if (!rq.gpus.empty()) s.gpus = static_cast<int>(positive_count(rq.gpus, "--gpus", false));
  return s;
}

struct Hosts {
  std::vector<std::string> names;  // distinct, in rank order
  int ranks_per_node = 0;
  int ranks_here = 0;  // on this rank's host
};

Hosts gather_hosts(Control& control) {
  Hosts h;
  std::map<std::string, int> per;
  const std::string here = host_name();
  for (const auto& name : control.allgather(here)) {
    if (per[name]++ == 0) h.names.push_back(name);
  }
  for (const auto& [name, n] : per) h.ranks_per_node = std::max(h.ranks_per_node, n);
  h.ranks_here = per[here];
  return h;
}

// The host buffers of every rank on each host against that host's available memory, before
// any is allocated; every rank learns every host's verdict so that all stop together.
void check_host_memory(Control& control, const Hosts& hosts,
                       const std::vector<std::unique_ptr<Backend>>& backends,
                       const std::vector<std::vector<Case>>& plans) {
  BufferNeeds worst;  // backends run one after another: the largest one counts
  for (std::size_t i = 0; i < backends.size(); ++i) {
    if (backends[i]->memory().kind() != MemoryKind::Host) continue;
    BufferNeeds n = buffer_needs(plans[i], backends[i]->size());
    if (n.send + n.recv > worst.send + worst.recv) worst = n;
  }
  std::string mine =
      host_memory_shortfall(worst.send, worst.recv, hosts.ranks_here, available_host_memory());
  for (const auto& verdict : control.allgather(mine)) {
    if (!verdict.empty()) usage_error("{}", verdict);
  }
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
  bo.nccl_library = rq.nccl_lib;
  bo.gpus_per_process = s.gpus;
  bo.dtypes = s.sweep.dtypes;
  bo.ops = s.sweep.ops;
  for (const auto& a : s.sweep.algorithms) bo.report_choice |= a == "default" || a == "all";
  s.backends = resolve_backends(rq.backends, bo.launch, bo, s.backend_choice);
  check_gpu_options(rq, s);

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

  Watchdog watchdog(s.timeout, bo.launch.rank == 0);
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
  std::vector<std::map<std::pair<Collective, std::string>, Opened>> comms_of;
  try {
    const int rank = control->rank();
    const int nranks = control->size();
    bo.control = control.get();
    bo.timeout_seconds = s.timeout;
    bo.gloo_iface = rq.gloo_iface;

    for (const auto& name : s.backends) {
      const BackendEntry* entry = find_backend(name);
      watchdog.arm(fmt::format("{} communicator set-up", name));
      if (std::string why = entry->unavailable_reason(bo); !why.empty()) {
        runtime_error("backend {} cannot run here: {}", name, why);
      }
      backends.push_back(entry->create(bo));
    }
    watchdog.disarm();
    const bool forced_algorithms = std::any_of(s.sweep.algorithms.begin(), s.sweep.algorithms.end(),
                                               [](const std::string& a) { return a != "default"; });
    for (auto& b : backends) {
      std::string why = forced_algorithms ? b->algorithms_unavailable() : std::string();
      if (rank == 0 && !why.empty()) {
        std::cerr << "commbench: warning: " << b->name() << ": " << why
                  << "; running default only\n";
      }
    }

    // Plan every backend before any measurement so bad combinations fail fast.
    std::vector<std::vector<Case>> plans;
    std::vector<std::string> notes;
    std::size_t total = 0;
    for (auto& b : backends) {
      plans.push_back(plan_cases(*b, s.sweep, b->size(), notes));  // several GPUs per process
      total += plans.back().size();
    }
    if (rank == 0) {
      for (const auto& n : notes) std::cerr << "commbench: note: " << n << "\n";
    }
    if (total == 0) usage_error("nothing to run: no backend offers the requested combination");

    Hosts hosts = gather_hosts(*control);
    check_host_memory(*control, hosts, backends, plans);
    RunMeta meta;
    meta.version = commbench_version();
    meta.git_commit = commbench_git_commit();
    meta.start_time = utc_now_iso8601();
    meta.command_line = invocation();
    meta.hosts = hosts.names;
    meta.nranks = nranks;
    meta.nnodes = static_cast<int>(hosts.names.size());
    meta.ranks_per_node = hosts.ranks_per_node;
    for (auto& b : backends) meta.libraries[b->name()] = b->library_detail();
    meta.environment = steering_environment();
    meta.launcher = launcher_facts(bo.launch);
    if (!s.backend_choice.empty()) {
      meta.backend_choice =
          fmt::format("{} (no -B): {}", fmt::join(s.backends, ","), s.backend_choice);
    }
    // Every rank's steering variables, so a job can tell whether all ranks saw the same settings.
    meta.environment_mismatch =
        environment_mismatches(control->allgather(nlohmann::json(meta.environment).dump()));
    // Each host's hardware fingerprint, so that comparing runs can tell when the hardware differs.
    meta.topology = topology_summary(control->allgather(host_topology_facts().dump()));

    std::vector<std::unique_ptr<Writer>> writers;
    if (rank == 0) {
      writers.push_back(make_stdout_writer(rq.format));
      for (const auto& path : rq.outputs) writers.push_back(make_file_writer(path));
      if (rq.extra_writer) writers.push_back(rq.extra_writer());
      for (auto& w : writers) w->begin(meta);
    }

    Progress progress(rq.progress, rank == 0, planned_seconds(plans, s.runner));
    std::uint64_t wrong_total = 0, wrong_cases = 0;
    std::string first_wrong;
    std::size_t done = 0;
    for (std::size_t bi = 0; bi < backends.size(); ++bi) {
      Backend& backend = *backends[bi];
      Runner runner(backend, *control, watchdog, s.runner, plans[bi]);
      if (!comms_of.empty()) comms_of.back().clear();  // the previous backend's are done
      comms_of.emplace_back();
      auto& comms = comms_of.back();
      std::set<std::string> skipped;
      for (const Case& c : plans[bi]) {
        ++done;
        progress.update(done, total, fmt::format("{} {}", backend.name(), describe(c)));
        auto key = std::make_pair(c.collective, c.algorithm);
        auto it = comms.find(key);
        if (it == comms.end()) {
          watchdog.arm(fmt::format("{} communicator set-up for {} ({})", backend.name(),
                                   name(c.collective), c.algorithm));
          it = comms.emplace(key, backend.open(c.collective, c.algorithm)).first;
          watchdog.disarm();
        }
        if (!it->second.comm) {
          std::string msg = fmt::format("{}: {} algorithm {} skipped: {}", backend.name(),
                                        name(c.collective), c.algorithm, it->second.skipped_reason);
          if (rank == 0 && skipped.insert(msg).second) {
            progress.clear();
            std::cerr << "commbench: note: " << msg << "\n";
          }
          continue;
        }
        CollectiveCall shape{c.collective,        c.dtype, c.op,    c.placement,
                             std::max(c.root, 0), c.count, nullptr, nullptr};
        if (std::string why = it->second.comm->skip_reason(shape); !why.empty()) {
          std::string msg = fmt::format("{}: {} algorithm {} skipped where {}", backend.name(),
                                        name(c.collective), c.algorithm, why);
          if (rank == 0 && skipped.insert(msg).second) {
            progress.clear();
            std::cerr << "commbench: note: " << msg << "\n";
          }
          continue;
        }
        Measurement m = runner.run(*it->second.comm, c, done);
        ResultRecord rec = make_record(backend, c, m, meta.nnodes);
        if (std::string chosen = it->second.comm->describe_choice(); !chosen.empty()) {
          rec.algorithm = chosen;  // what the library picked for "default"
        }
        if (rec.wrong && *rec.wrong > 0) {
          wrong_total += *rec.wrong;
          if (wrong_cases++ == 0) first_wrong = fmt::format("{} {}", backend.name(), describe(c));
        }
        for (auto& w : writers) w->add(rec);
      }
    }
    progress.finish();
    for (auto& w : writers) w->finish();
    if (wrong_cases > 0) {
      fail(ErrorKind::Validation, "validation failed: {} wrong element{} in {} case{} (first: {})",
           wrong_total, wrong_total == 1 ? "" : "s", wrong_cases, wrong_cases == 1 ? "" : "s",
           first_wrong);
    }
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
  cmd->add_option("--gloo-iface", rq.gloo_iface,
                  "network interface for Gloo (default: loopback on one host, else the host "
                  "name's address)");
  cmd->add_option("--timeout", rq.timeout, "watchdog seconds on set-up and each operation (300)");
  cmd->add_option("--format", rq.format,
                  "stdout format: table, csv, json, md, gbench (default table)");
  cmd->add_option("--output", rq.outputs,
                  "also write FILE (.txt .csv .json .jsonl .md .gbench.json); repeatable");
  cmd->add_option("--progress", rq.progress, "progress on stderr: auto, always, never");
  cmd->add_option("--nccl-lib", rq.nccl_lib,
                  "libnccl to load (file or directory; default COMMBENCH_NCCL_LIB, then search)");
  cmd->add_option("-g,--gpus", rq.gpus, "GPUs each process drives with -B nccl (default 1)");
  cmd->add_option("--repeat", rq.repeat,
                  "run the whole sweep N times, each a separate launch; figures are medians over "
                  "repetitions (default 1)");
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
