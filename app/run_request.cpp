#include "app/run_request.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <sstream>

#include "collectives/backends/registry.hpp"
#include "collectives/catalogue/catalogue.hpp"
#include "collectives/catalogue/dtype.hpp"
#include "collectives/catalogue/names.hpp"
#include "collectives/catalogue/split.hpp"
#include "common/error.hpp"
#include "common/file_identity.hpp"
#include "common/output_path.hpp"
#include "common/units.hpp"
#include "core/process_start.hpp"
#include "launch/job.hpp"
#include "launch/mpi_relaunch.hpp"
#include "launch/start.hpp"
#include "report/format/report_format.hpp"
#include "report/format/writer.hpp"

namespace cb {

namespace {

using R = RunRequest;
using P = RunPlan;
using RunFlag = Flag<R, P>;
using Read = void (*)(P&, const std::string&);

// --- checked numbers

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

// --- rows

// A flag with one value, read into the plan by `read` (every time: an empty value is read too).
RunFlag text(const char* names, std::string R::*field, std::string help, Read read) {
  RunFlag f;
  f.names = names;
  f.help = std::move(help);
  f.text = [field](R& r) -> std::string& { return r.*field; };
  f.read = [field, read](P& p, const R& r) { read(p, r.*field); };
  return f;
}

// A flag whose absence (or an empty value) leaves the plan's default: read only when given.
RunFlag optional(const char* names, std::string R::*field, std::string help, Read read) {
  RunFlag f = text(names, field, std::move(help), nullptr);
  f.read = [field, read](P& p, const R& r) {
    if (!(r.*field).empty()) read(p, r.*field);
  };
  return f;
}

// An on/off flag, --NAME and --no-NAME.
RunFlag toggle(const char* names, bool R::*field, std::string help, void (*read)(P&, bool)) {
  RunFlag f;
  f.names = names;
  f.help = std::move(help);
  f.toggle = field;
  f.read = [field, read](P& p, const R& r) { read(p, r.*field); };
  return f;
}

// A repeatable flag, each value read in turn.
RunFlag each(const char* names, std::vector<std::string> R::*field, std::string help, Read read) {
  RunFlag f;
  f.names = names;
  f.help = std::move(help);
  f.list = field;
  f.read = [field, read](P& p, const R& r) {
    for (const auto& v : r.*field) read(p, v);
  };
  return f;
}

// A flag of the sweep itself (its outputs, its progress): a fresh job is not given it again.
RunFlag sweeps_own(RunFlag f) {
  f.relaunched = false;
  return f;
}

// The names a help text lists, from the catalogue and the registry.
std::string collective_names() {
  std::vector<std::string_view> names;
  for (const auto& c : all_collectives()) names.push_back(c.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string op_names() {
  std::vector<std::string_view> names;
  for (ReduceOp op : all_ops()) names.push_back(name(op));
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string gpu_backend_names() {
  std::vector<std::string> names;
  for (const auto& e : backend_registry()) {
    if (e.gpu) names.push_back(e.name);
  }
  return fmt::format("{}", fmt::join(names, " or "));
}

// `--launch ' '` would read as no --launch at all and run here, not under the launcher meant
// (an empty value is refused by the rule for every option).
std::string empty_prefix(const std::string& value) {
  if (value.empty() || value.find_first_not_of(" \t\n") != std::string::npos) return {};
  return "an empty launcher prefix: expected e.g. 'mpirun -np 4' or 'srun -N 2'";
}

void read_memory(P& p, const std::string& v) {
  if (v.empty() || v == "host") {
    p.memory = MemoryKind::Host;
  } else if (v == "device") {
    p.memory = MemoryKind::Device;
  } else {
    usage_error("invalid --memory '{}': expected host or device", v);
  }
  p.memory_given = !v.empty();
}

void read_progress(P& p, const std::string& v) {
  if (v != "auto" && v != "always" && v != "never") {
    usage_error("invalid --progress '{}': expected auto, always or never", v);
  }
  p.progress = v;
}

Flags<R, P> make_run_flags() {
  Flags<R, P> f = {
      text("-c,--collectives", &R::collectives, "all, or a list of " + collective_names(),
           [](P& p, const std::string& v) { p.sweep.collectives = parse_collectives(v); }),
      optional("-B,--backends", &R::backends, backend_names() + " (default: see README)",
               [](P& p, const std::string& v) {
                 p.backends = resolve_backends(split_list(v), true, BackendOptions{}).names;
               }),
      text("-A,--algorithms", &R::algorithms, "default, all, or names from `list algorithms`",
           [](P& p, const std::string& v) {
             p.sweep.algorithms = split_list(v);
             if (p.sweep.algorithms.empty())
               usage_error("empty --algorithms list: expected default, all or names");
           }),
      text("-b,--min-bytes", &R::min_bytes, "smallest size (8, 64K, 4M, 1G; binary)",
           [](P& p, const std::string& v) { p.sweep.min_bytes = parse_size(v, "--min-bytes"); }),
      optional("-e,--max-bytes", &R::max_bytes, "largest size (default 64M host, 1G device)",
               [](P& p, const std::string& v) {
                 p.sweep.max_bytes = parse_size(v, "--max-bytes");
                 p.max_bytes_given = true;
               }),
      text("-f,--step-factor", &R::step_factor, "multiplicative size step (default 2)",
           [](P& p, const std::string& v) {
             p.sweep.step_factor = parse_double(v, "--step-factor");
           }),
      optional("-i,--step-bytes", &R::step_bytes, "additive size step (overrides -f)",
               [](P& p, const std::string& v) {
                 p.sweep.step_bytes = parse_size(v, "--step-bytes");
                 if (p.sweep.step_bytes == 0)
                   usage_error("invalid --step-bytes '0': expected a positive size");
               }),
      text("-d,--dtypes", &R::dtypes, "element types (default float), or all",
           [](P& p, const std::string& v) { p.sweep.dtypes = parse_dtypes(v); }),
      text("-o,--ops", &R::ops, op_names() + ", or all (default sum)",
           [](P& p, const std::string& v) { p.sweep.ops = parse_ops(v); }),
      text("--placement", &R::placement, "out, in or both (default out)",
           [](P& p, const std::string& v) { p.sweep.placements = parse_placement(v); }),
      text("-r,--root", &R::root, "root rank for rooted collectives, or all (default 0)",
           [](P& p, const std::string& v) { p.sweep.root = parse_root(v, p.sweep.all_roots); }),
      // Every iteration keeps a sample, so the counts are bounded before anything is allocated.
      optional(
          "-w,--warmup", &R::warmup, "warm-up iterations per case (default adaptive)",
          [](P& p, const std::string& v) { p.runner.warmup = bounded_count(v, "--warmup", true); }),
      optional(
          "-n,--iters", &R::iters, "fixed timed iterations per case (default adaptive)",
          [](P& p, const std::string& v) { p.runner.iters = bounded_count(v, "--iters", false); }),
      text(
          "--min-time", &R::min_time, "adaptive time budget per case, seconds (default 0.05)",
          [](P& p, const std::string& v) { p.runner.budget_s = bounded_seconds(v, "--min-time"); }),
      toggle("--check,!--no-check", &R::check, "validate every result exactly (default on)",
             [](P& p, bool on) { p.runner.check = on; }),
      text("--memory", &R::memory,
           fmt::format("host or device (default device for {}, else host)", gpu_backend_names()),
           read_memory),
      optional("-N,--nranks", &R::nranks,
               "ranks to start when not under mpirun/srun (default: one per GPU, else 2)",
               [](P& p, const std::string& v) {
                 const std::uint64_t n = positive_count(v, "--nranks", false);
                 if (n > 1024) usage_error("invalid --nranks '{}': at most 1024 local ranks", v);
                 p.nranks = static_cast<int>(n);
               }),
      text("--timeout", &R::timeout, "watchdog seconds on set-up and each operation (300)",
           [](P& p, const std::string& v) { p.timeout = bounded_seconds(v, "--timeout"); }),
      sweeps_own(text("--format", &R::format,
                      fmt::format("stdout format: {} (default table)", listed(stdout_formats())),
                      [](P& p, const std::string& v) {
                        std::ostringstream probe;
                        make_stream_writer(v, probe);  // validates --format before any work
                        p.format = v;
                      })),
      sweeps_own(each("--output", &R::outputs,
                      fmt::format("also write FILE ({}); repeatable",
                                  listed(kRecordsFormats.extensions(), " ")),
                      [](P& p, const std::string& path) {
                        check_output_path(path);
                        p.outputs.push_back(path);
                      })),
      sweeps_own(text("--progress", &R::progress, "progress on stderr: auto, always, never",
                      read_progress)),
  };
  for (const auto& e : backend_registry()) {
    for (const auto& b : e.flags) {
      RunFlag row;
      row.names = b.name;
      row.help = b.help;
      row.text = [name = b.name](R& r) -> std::string& { return r.backend_flags[name]; };
      row.read = [name = b.name](P& p, const R& r) {
        if (auto it = r.backend_flags.find(name); it != r.backend_flags.end())
          p.backend_flags[name] = it->second;
      };
      f.push_back(std::move(row));
    }
  }
  f.push_back(
      optional("-g,--gpus", &R::gpus,
               fmt::format("GPUs each process drives with -B {} (default 1)", gpu_backend_names()),
               [](P& p, const std::string& v) {
                 p.gpus = static_cast<int>(positive_count(v, "--gpus", false));
               }));
  f.push_back(sweeps_own(text("--repeat", &R::repeat,
                              "run the whole sweep N times, each a separate launch; figures are "
                              "medians over repetitions (default 1)",
                              [](P& p, const std::string& v) {
                                const std::uint64_t n = positive_count(v, "--repeat", false);
                                if (n > 1000)
                                  usage_error("invalid --repeat '{}': at most 1000 repetitions", v);
                                p.repeat = static_cast<int>(n);
                              })));
  f.push_back(each("--split", &R::splits,
                   "alltoallv's split of the bytes between pairs of ranks: uniform, distance[:S], "
                   "zipf:A, moe:E,K[,G][,CF] or matrix:FILE (default uniform); repeatable",
                   [](P& p, const std::string& v) {
                     SplitSettings& split = p.sweep.split;
                     if (!split.requested) split.splits.clear();
                     split.requested = true;
                     SplitSpec spec = parse_split(v);
                     const bool repeated = std::any_of(split.splits.begin(), split.splits.end(),
                                                       [&](const auto& s) { return s == spec; });
                     if (!repeated) split.splits.push_back(spec);
                   }));
  f.push_back(optional("--split-seed", &R::split_seed,
                       "seed of the moe router's scores, the same on every rank (default 1)",
                       [](P& p, const std::string& v) {
                         p.sweep.split.seed = positive_count(v, "--split-seed", true);
                       }));
  f.push_back(optional("--moe-hidden", &R::moe_hidden,
                       "elements per token of --split moe, of the case's dtype (default 7168)",
                       [](P& p, const std::string& v) {
                         p.sweep.split.moe_hidden = positive_count(v, "--moe-hidden", false);
                         if (p.sweep.split.moe_hidden > (1ULL << 30)) {
                           usage_error("invalid --moe-hidden '{}': at most {} elements per token",
                                       v, 1ULL << 30);
                         }
                       }));
  f.push_back(text("--roof-link-gbps", &R::roof_link_gbps,
                   "network rate per host in Gbit/s for the roof, where sysfs cannot tell it "
                   "(virtual NICs, a throttled or emulated link)",
                   [](P& p, const std::string& v) { read_roof_link_gbps(v, p.roof); }));
  f.push_back(text("--roof-host-memory", &R::roof_host_memory,
                   "host memory copy bandwidth in GB/s for the roof, or 'measure' in this launch "
                   "(default: the highest measured this boot, measured again after 10 minutes)",
                   [](P& p, const std::string& v) { read_roof_host_memory(v, p.roof); }));
  RunFlag launch = sweeps_own(text("--launch", &R::launch,
                                   "launcher prefix for each launch, e.g. 'mpirun -np 16 "
                                   "--hostfile hosts' or 'srun -N 2 --ntasks-per-node 8'",
                                   [](P& p, const std::string& v) { p.launch_prefix = v; }));
  launch.refuse = empty_prefix;
  launch.refused_what = "PREFIX";
  f.push_back(std::move(launch));
  return f;
}

// --- what depends on several flags

// -e's default depends on the memory; the sizes are checked together (min <= max, the step).
void size_defaults(P& p) {
  if (!p.max_bytes_given) {
    p.sweep.max_bytes = p.memory == MemoryKind::Device ? (1ULL << 30) : (64ULL << 20);
    p.sweep.max_bytes = std::max(p.sweep.max_bytes, p.sweep.min_bytes);
  }
  sweep_sizes(p.sweep);
}

// alltoallv's splits: the router's seed and the tokens' size in every split, --split only where
// alltoallv runs, and a matrix file read here, before any rank starts (the ranks take rank 0's
// copy: share_split_matrices).
void split_settings(P& p) {
  SplitSettings& split = p.sweep.split;
  for (auto& spec : split.splits) {
    spec.seed = split.seed;
    spec.moe_hidden = split.moe_hidden;
  }
  const auto& cs = p.sweep.collectives;
  if (split.requested && std::find(cs.begin(), cs.end(), Collective::AllToAllV) == cs.end()) {
    usage_error("--split applies to alltoallv, which -c does not select (add it: -c alltoallv)");
  }
  if (detect_launch().kind == LaunchInfo::Kind::Single) {
    for (auto& spec : split.splits) load_matrix(spec);
  }
}

// Fresh jobs: refused under mpirun/srun; --launch's prefix in words, its launcher known.
void job_checks(P& p, const char* jobs_for) {
  if (!jobs_for && p.repeat == 1 && p.launch_prefix.empty()) return;
  const char* what = jobs_for ? jobs_for : p.repeat > 1 ? "--repeat" : "--launch";
  if (detect_launch().kind != LaunchInfo::Kind::Single) {
    usage_error(
        "{} starts a fresh job per launch and cannot run under mpirun/srun: run commbench "
        "directly, and give your launcher with --launch 'PREFIX'",
        what);
  }
  if (p.launch_prefix.empty()) return;
  p.launch = split_command(p.launch_prefix);
  launcher_kind(p.launch.front(), build_mpi_flavor());
  check_launcher_exists(p.launch.front());
}

}  // namespace

const Flags<RunRequest, RunPlan>& run_flags() {
  static const Flags<RunRequest, RunPlan> flags = make_run_flags();
  return flags;
}

RunPlan plan_run(const RunRequest& rq, const char* jobs_for) {
  RunPlan p;
  for (const auto& f : run_flags()) {
    if (f.read) f.read(p, rq);
  }
  size_defaults(p);
  split_settings(p);
  BackendOptions flags;
  flags.flags = p.backend_flags;
  check_backend_options(flags);
  std::vector<NamedFile> inputs;
  for (const auto& split : p.sweep.split.splits) {
    if (split.kind == SplitKind::Matrix) inputs.push_back({"--split", split.path});
  }
  check_distinct_outputs(p.outputs, inputs);
  // -B given: each backend's checks of the run's choices now; without -B they are made where
  // the ranks run, once the backends are chosen (rank_run).
  for (const auto& [name, value] : p.backend_flags) {
    if (!value.empty()) p.own_options.push_back(name);
  }
  if (!p.backends.empty()) {
    check_run_choices({p.backends, p.memory, p.memory_given, p.gpus, p.own_options});
  }
  p.job_arguments = run_arguments(rq);
  job_checks(p, jobs_for);
  return p;
}

std::vector<std::string> run_arguments(const RunRequest& rq) {
  std::vector<std::string> a = {"run"};
  for (auto& arg : run_flag_arguments(rq, [](const RunFlag&) { return true; })) {
    a.push_back(std::move(arg));
  }
  return a;
}

std::vector<std::string> run_flag_arguments(const RunRequest& rq,
                                            const std::function<bool(const RunFlag&)>& keep) {
  std::vector<std::string> a;
  RunRequest values = rq;  // the flags' accessors take a request they may add a key to
  for (const auto& f : run_flags()) {
    if (!f.relaunched || !keep(f)) continue;
    if (f.toggle) {
      a.push_back((values.*f.toggle ? "--" : "--no-") + f.long_name().substr(2));
    } else if (f.list) {
      for (const auto& v : values.*f.list) a.insert(a.end(), {f.long_name(), v});
    } else if (const std::string& v = f.text(values); !v.empty()) {
      a.insert(a.end(), {f.long_name(), v});
    }
  }
  return a;
}

int wanted_ranks(const RunPlan& plan) {
  // -N defaults to one rank per GPU, so --gpus G makes it one rank per G GPUs.
  return plan.nranks ? *plan.nranks : std::max(1, default_local_ranks() / plan.gpus);
}

}  // namespace cb
