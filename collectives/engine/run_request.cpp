#include "collectives/engine/run_request.hpp"

#include <algorithm>
#include <cstdint>

#include "collectives/backends/registry.hpp"
#include "collectives/catalogue/names.hpp"
#include "collectives/launch/start.hpp"
#include "common/error.hpp"
#include "common/units.hpp"

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

// The sizes: -b, -e (whose default depends on the memory), -f, -i.
void size_settings(const RunRequest& rq, RunSettings& s) {
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
}

// --split, --split-seed and --moe-hidden; --split only where alltoallv runs.
void split_settings(const RunRequest& rq, RunSettings& s) {
  SplitSettings& split = s.sweep.split;
  if (!rq.split_seed.empty()) {
    split.seed = positive_count(rq.split_seed, "--split-seed", true);
  }
  if (!rq.moe_hidden.empty()) {
    split.moe_hidden = positive_count(rq.moe_hidden, "--moe-hidden", false);
    if (split.moe_hidden > (1ULL << 30)) {
      usage_error("invalid --moe-hidden '{}': at most {} elements per token", rq.moe_hidden,
                  1ULL << 30);
    }
  }
  split.requested = !rq.splits.empty();
  if (split.requested) split.splits.clear();
  for (const auto& text : rq.splits) {
    SplitSpec spec = parse_split(text);
    const bool repeated = std::any_of(split.splits.begin(), split.splits.end(),
                                      [&](const auto& s) { return s == spec; });
    if (!repeated) split.splits.push_back(spec);
  }
  for (auto& spec : split.splits) {
    spec.seed = split.seed;
    spec.moe_hidden = split.moe_hidden;
  }
  const auto& cs = s.sweep.collectives;
  if (split.requested && std::find(cs.begin(), cs.end(), Collective::AllToAllV) == cs.end()) {
    usage_error("--split applies to alltoallv, which -c does not select (add it: -c alltoallv)");
  }
}

RunFlag text(const char* names, std::string RunRequest::*field, const char* help,
             bool relaunched = true) {
  return {names, help, [field](RunRequest& rq) -> std::string& { return rq.*field; }, nullptr,
          nullptr, relaunched};
}

std::vector<RunFlag> make_run_flags() {
  using R = RunRequest;
  std::vector<RunFlag> f = {
      text("-c,--collectives", &R::collectives,
           "all, or a list of allreduce, allgather, reduce_scatter, broadcast, reduce, alltoall, "
           "gather, scatter, sendrecv, barrier, alltoallv"),
      text("-B,--backends", &R::backends, "mpi, gloo, nccl (default: see README)"),
      text("-A,--algorithms", &R::algorithms, "default, all, or names from `list algorithms`"),
      text("-b,--min-bytes", &R::min_bytes, "smallest size (8, 64K, 4M, 1G; binary)"),
      text("-e,--max-bytes", &R::max_bytes, "largest size (default 64M host, 1G device)"),
      text("-f,--step-factor", &R::step_factor, "multiplicative size step (default 2)"),
      text("-i,--step-bytes", &R::step_bytes, "additive size step (overrides -f)"),
      text("-d,--dtypes", &R::dtypes, "element types (default float), or all"),
      text("-o,--ops", &R::ops, "sum, prod, min, max, avg, or all (default sum)"),
      text("--placement", &R::placement, "out, in or both (default out)"),
      text("-r,--root", &R::root, "root rank for rooted collectives, or all (default 0)"),
      text("-w,--warmup", &R::warmup, "warm-up iterations per case (default adaptive)"),
      text("-n,--iters", &R::iters, "fixed timed iterations per case (default adaptive)"),
      text("--min-time", &R::min_time, "adaptive time budget per case, seconds (default 0.05)"),
      {"--check,!--no-check", "validate every result exactly (default on)", {}, &R::check},
      text("--memory", &R::memory, "host or device (default device for nccl, else host)"),
      text("-N,--nranks", &R::nranks,
           "ranks to start when not under mpirun/srun (default: one per GPU, else 2)"),
      text("--timeout", &R::timeout, "watchdog seconds on set-up and each operation (300)"),
      text("--format", &R::format, "stdout format: table, csv, json, md, gbench (default table)",
           false),
      {"--output", "also write FILE (.txt .csv .json .jsonl .md .gbench.json); repeatable", {},
       nullptr, &R::outputs, false},
      text("--progress", &R::progress, "progress on stderr: auto, always, never", false),
  };
  for (const auto& e : backend_registry()) {
    for (const auto& b : e.flags) {
      const std::string name = b.name;
      f.push_back({name, b.help, [name](RunRequest& rq) -> std::string& {
                     return rq.backend_flags[name];
                   }});
    }
  }
  f.push_back(text("-g,--gpus", &R::gpus, "GPUs each process drives with -B nccl (default 1)"));
  f.push_back(text("--repeat", &R::repeat,
                   "run the whole sweep N times, each a separate launch; figures are medians over "
                   "repetitions (default 1)",
                   false));
  f.push_back({"--split",
               "alltoallv's split of the bytes between pairs of ranks: uniform, distance[:S], "
               "zipf:A, moe:E,K[,G][,CF] or matrix:FILE (default uniform); repeatable",
               {},
               nullptr,
               &R::splits});
  f.push_back(text("--split-seed", &R::split_seed,
                   "seed of the moe router's scores, the same on every rank (default 1)"));
  f.push_back(text("--moe-hidden", &R::moe_hidden,
                   "elements per token of --split moe, of the case's dtype (default 7168)"));
  f.push_back(text("--roof-link-gbps", &R::roof_link_gbps,
                   "network rate per host in Gbit/s for the roof, where sysfs cannot tell it "
                   "(virtual NICs, a throttled or emulated link)"));
  f.push_back(text("--roof-host-memory", &R::roof_host_memory,
                   "host memory copy bandwidth in GB/s for the roof, or 'measure' in this launch "
                   "(default: the highest measured this boot, measured again after 10 minutes)"));
  f.push_back(text("--launch", &R::launch,
                   "launcher prefix for each launch, e.g. 'mpirun -np 16 --hostfile hosts' or "
                   "'srun -N 2 --ntasks-per-node 8'",
                   false));
  return f;
}

}  // namespace

std::string RunFlag::long_name() const {
  auto start = names.find("--");
  return names.substr(start, names.find(',', start) - start);
}

const std::vector<RunFlag>& run_flags() {
  static const std::vector<RunFlag> flags = make_run_flags();
  return flags;
}

RunSettings run_settings(const RunRequest& rq) {
  RunSettings s;
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
  size_settings(rq, s);
  split_settings(rq, s);
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
  return s;
}

int repeat_count(const RunRequest& rq) {
  std::uint64_t n = positive_count(rq.repeat, "--repeat", false);
  if (n > 1000) usage_error("invalid --repeat '{}': at most 1000 repetitions", rq.repeat);
  return static_cast<int>(n);
}

int wanted_ranks(const RunRequest& rq, const RunSettings& s) {
  // -N defaults to one rank per GPU, so --gpus G makes it one rank per G GPUs.
  return rq.nranks.empty() ? std::max(1, default_local_ranks() / s.gpus)
                           : static_cast<int>(positive_count(rq.nranks, "--nranks", false));
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

}  // namespace cb
