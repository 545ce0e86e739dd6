#include "app/run_request.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "collectives/backends/registry.hpp"
#include "collectives/catalogue/catalogue.hpp"
#include "collectives/catalogue/dtype.hpp"
#include "report/format/report_format.hpp"
#include "report/format/writer.hpp"

namespace cb {

namespace {

using R = RunRequest;

Flag<R> text(const char* names, std::string R::*field, std::string help, bool relaunched = true) {
  Flag<R> f = value_flag(names, field, std::move(help));
  f.relaunched = relaunched;
  return f;
}

// A flag of the sweep itself (its outputs, its progress): a fresh job is not given it again.
Flag<R> sweeps_own(Flag<R> f) {
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

// `--launch ''` would read as no --launch at all and run here, not under the launcher meant.
std::string empty_prefix(const std::string& value) {
  if (value.find_first_not_of(" \t\n") != std::string::npos) return {};
  return "an empty launcher prefix: expected e.g. 'mpirun -np 4' or 'srun -N 2'";
}

Flags<R> make_run_flags() {
  Flags<R> f = {
      text("-c,--collectives", &R::collectives, "all, or a list of " + collective_names()),
      text("-B,--backends", &R::backends, backend_names() + " (default: see README)"),
      text("-A,--algorithms", &R::algorithms, "default, all, or names from `list algorithms`"),
      text("-b,--min-bytes", &R::min_bytes, "smallest size (8, 64K, 4M, 1G; binary)"),
      text("-e,--max-bytes", &R::max_bytes, "largest size (default 64M host, 1G device)"),
      text("-f,--step-factor", &R::step_factor, "multiplicative size step (default 2)"),
      text("-i,--step-bytes", &R::step_bytes, "additive size step (overrides -f)"),
      text("-d,--dtypes", &R::dtypes, "element types (default float), or all"),
      text("-o,--ops", &R::ops, op_names() + ", or all (default sum)"),
      text("--placement", &R::placement, "out, in or both (default out)"),
      text("-r,--root", &R::root, "root rank for rooted collectives, or all (default 0)"),
      text("-w,--warmup", &R::warmup, "warm-up iterations per case (default adaptive)"),
      text("-n,--iters", &R::iters, "fixed timed iterations per case (default adaptive)"),
      text("--min-time", &R::min_time, "adaptive time budget per case, seconds (default 0.05)"),
      toggle_flag("--check,!--no-check", &R::check, "validate every result exactly (default on)"),
      text("--memory", &R::memory,
           fmt::format("host or device (default device for {}, else host)", gpu_backend_names())),
      text("-N,--nranks", &R::nranks,
           "ranks to start when not under mpirun/srun (default: one per GPU, else 2)"),
      text("--timeout", &R::timeout, "watchdog seconds on set-up and each operation (300)"),
      text("--format", &R::format,
           fmt::format("stdout format: {} (default table)", listed(stdout_formats())), false),
      sweeps_own(list_flag("--output", &R::outputs,
                           fmt::format("also write FILE ({}); repeatable",
                                       listed(kRecordsFormats.extensions(), " ")))),
      text("--progress", &R::progress, "progress on stderr: auto, always, never", false),
  };
  for (const auto& e : backend_registry()) {
    for (const auto& b : e.flags) {
      Flag<R> row;
      row.names = b.name;
      row.help = b.help;
      row.text = [name = b.name](R& rq) -> std::string& { return rq.backend_flags[name]; };
      f.push_back(std::move(row));
    }
  }
  f.push_back(
      text("-g,--gpus", &R::gpus,
           fmt::format("GPUs each process drives with -B {} (default 1)", gpu_backend_names())));
  f.push_back(text("--repeat", &R::repeat,
                   "run the whole sweep N times, each a separate launch; figures are medians over "
                   "repetitions (default 1)",
                   false));
  f.push_back(text("--roof-link-gbps", &R::roof_link_gbps,
                   "network rate per host in Gbit/s for the roof, where sysfs cannot tell it "
                   "(virtual NICs, a throttled or emulated link)"));
  f.push_back(text("--roof-host-memory", &R::roof_host_memory,
                   "host memory copy bandwidth in GB/s for the roof, or 'measure' in this launch "
                   "(default: measured once per boot and cached)"));
  Flag<R> launch = text("--launch", &R::launch,
                        "launcher prefix for each launch, e.g. 'mpirun -np 16 --hostfile hosts' or "
                        "'srun -N 2 --ntasks-per-node 8'",
                        false);
  launch.refuse = empty_prefix;
  launch.refused_what = "PREFIX";
  f.push_back(std::move(launch));
  return f;
}

}  // namespace

const Flags<RunRequest>& run_flags() {
  static const Flags<RunRequest> flags = make_run_flags();
  return flags;
}

std::vector<std::string> run_arguments(const RunRequest& rq) {
  std::vector<std::string> a = {"run"};
  RunRequest values = rq;  // the flags' accessors take a request they may add a key to
  for (const auto& f : run_flags()) {
    if (!f.relaunched) continue;
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
