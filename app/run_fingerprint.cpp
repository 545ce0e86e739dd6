#include "app/run_fingerprint.hpp"

#include <fmt/format.h>

#include <functional>
#include <set>

#include "collectives/backends/registry.hpp"
#include "collectives/catalogue/catalogue.hpp"
#include "collectives/catalogue/dtype.hpp"
#include "common/units.hpp"
#include "common/version_info.hpp"

namespace cb {

namespace {

using Value = std::function<std::string(const RunPlan&)>;

template <typename T, typename Name>
std::string joined(const std::vector<T>& items, Name name) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ',';
    out += name(item);
  }
  return out;
}

std::string count_or(const std::optional<std::uint64_t>& n, const char* otherwise) {
  return n ? std::to_string(*n) : otherwise;
}

// Exact: the value as the shortest text that reads back to it.
std::string number(double v) {
  return fmt::format("{}", v);
}

// A split as it is measured: a matrix is rank 0's file, whatever path another rank was given.
std::string split_value(const SplitSpec& s) {
  switch (s.kind) {
    case SplitKind::Uniform:
      return "uniform";
    case SplitKind::Distance:
      return "distance:" + number(s.spread);
    case SplitKind::Zipf:
      return "zipf:" + number(s.zipf);
    case SplitKind::Moe:
      return fmt::format("moe:{},{},{},{}", s.moe.experts, s.moe.topk, s.moe.groups,
                         number(s.moe.capacity));
    case SplitKind::Matrix:
      return "matrix (rank 0's file)";
  }
  return "";
}

// How each agreed row of run_flags() reads its value from the plan, by long name.
const std::map<std::string, Value>& agreed_values() {
  static const std::map<std::string, Value> values = {
      {"--collectives",
       [](const RunPlan& p) {
         return joined(p.sweep.collectives, [](Collective c) { return name(c); });
       }},
      {"--backends",
       [](const RunPlan& p) {
         return p.backends.empty() ? std::string("(default)")
                                   : joined(p.backends, [](const std::string& b) { return b; });
       }},
      {"--algorithms",
       [](const RunPlan& p) {
         return joined(p.sweep.algorithms, [](const std::string& a) { return a; });
       }},
      {"--min-bytes", [](const RunPlan& p) { return exact_size(p.sweep.min_bytes); }},
      {"--max-bytes", [](const RunPlan& p) { return exact_size(p.sweep.max_bytes); }},
      // An additive step overrides the factor, which then decides nothing.
      {"--step-factor",
       [](const RunPlan& p) {
         return p.sweep.step_bytes ? std::string("(--step-bytes)") : number(p.sweep.step_factor);
       }},
      {"--step-bytes",
       [](const RunPlan& p) {
         return p.sweep.step_bytes ? exact_size(p.sweep.step_bytes) : std::string("(none)");
       }},
      {"--dtypes",
       [](const RunPlan& p) {
         return joined(p.sweep.dtypes, [](DType t) { return info(t).name; });
       }},
      {"--ops",
       [](const RunPlan& p) { return joined(p.sweep.ops, [](ReduceOp o) { return name(o); }); }},
      {"--placement",
       [](const RunPlan& p) {
         return joined(p.sweep.placements, [](Placement x) { return name(x); });
       }},
      {"--root",
       [](const RunPlan& p) {
         return p.sweep.all_roots ? std::string("all") : std::to_string(p.sweep.root);
       }},
      {"--warmup", [](const RunPlan& p) { return count_or(p.runner.warmup, "adaptive"); }},
      {"--iters", [](const RunPlan& p) { return count_or(p.runner.iters, "adaptive"); }},
      {"--min-time", [](const RunPlan& p) { return number(p.runner.budget_s); }},
      {"--check", [](const RunPlan& p) { return std::string(p.runner.check ? "on" : "off"); }},
      {"--memory",
       [](const RunPlan& p) {
         return std::string(p.memory == MemoryKind::Device ? "device" : "host");
       }},
      {"--timeout", [](const RunPlan& p) { return number(p.timeout); }},
      {"--gpus", [](const RunPlan& p) { return std::to_string(p.gpus); }},
      {"--split", [](const RunPlan& p) { return joined(p.sweep.split.splits, split_value); }},
      {"--split-seed", [](const RunPlan& p) { return std::to_string(p.sweep.split.seed); }},
      {"--moe-hidden", [](const RunPlan& p) { return std::to_string(p.sweep.split.moe_hidden); }},
  };
  return values;
}

bool backend_flag(const std::string& long_name) {
  for (const auto& e : backend_registry()) {
    for (const auto& f : e.flags)
      if (f.name == long_name) return true;
  }
  return false;
}

}  // namespace

const std::map<std::string, std::string>& run_options_not_agreed() {
  static const std::map<std::string, std::string> rows = {
      {"--nranks", "the launcher's WORLD_SIZE decides; -N is checked against it"},
      {"--format", "rank 0 alone writes"},
      {"--output", "rank 0 alone writes"},
      {"--progress", "each rank's own stderr"},
      {"--repeat", "refused under a launcher"},
      {"--launch", "refused under a launcher"},
      {"--gloo-iface", "a network interface of the rank's own host"},
      {"--nccl-lib", "a library on the rank's own host"},
      {"--roof-link-gbps", "describes the rank's own host for the roof"},
      {"--roof-host-memory", "describes the rank's own host for the roof"},
  };
  return rows;
}

PlanFingerprint command_fingerprint(const std::string& subcommand) {
  PlanFingerprint f;
  f.add("commbench", commbench_version());
  f.add("subcommand", subcommand);
  return f;
}

PlanFingerprint run_fingerprint(const RunPlan& plan, PlanFingerprint head) {
  const auto& values = agreed_values();
  std::set<std::string> added;
  auto add = [&](const std::string& name) {
    if (!added.insert(name).second || run_options_not_agreed().count(name)) return;
    if (auto it = values.find(name); it != values.end()) {
      head.add(name, it->second(plan));
    } else if (backend_flag(name)) {
      // A backend's own flag decides how its cases run (--cuda-graph), as given.
      auto given = plan.backend_flags.find(name);
      head.add(name, given == plan.backend_flags.end() ? "(not given)" : given->second);
    }
  };
  // An option that decides another's value comes first, so that it is the one named: the
  // memory decides -e's default, -i where given makes -f moot.
  static const std::map<std::string, std::string> kDecidedBy = {{"--max-bytes", "--memory"},
                                                                {"--step-factor", "--step-bytes"}};
  for (const auto& row : run_flags()) {
    if (auto it = kDecidedBy.find(row.long_name()); it != kDecidedBy.end()) add(it->second);
    add(row.long_name());
  }
  return head;
}

}  // namespace cb
