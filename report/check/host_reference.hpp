// `check --expect auto` on host memory (MPI, Gloo on one node): each collective against healthy
// launches of the same library, collective and ranks on the same kind of machine, measured there
// (report/check/host_references.json for the machine the project is developed on, or the user's own
// healthy runs given with --reference). Only the reference launches whose control measurement
// agrees with the judged launch's count (the machine in the same mode), and a collective is judged
// only where those healthy launches lie close enough together for a node half as fast to fall
// below all of them: then a healthy launch passes and one twice as slow fails; else "not judged"
// with the reason, never a pass.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "common/record.hpp"
#include "report/format/result_reader.hpp"

namespace cb {

// What a launch itself measured of its machine: the control (median over its samples), how far
// the control moved during it, and the host's load and steal.
struct LaunchConditions {
  double pingpong_ns = 0, compute_us = 0;  // 0: not measured
  double pingpong_moved = 1, compute_moved = 1;
  double load_average = 0, steal_fraction = 0;
};

// One case of a reference: everything but the size and the figures.
struct ReferenceCase {
  std::string collective, algorithm, dtype, op, placement;
  int root = -1;
  std::uint64_t bytes = 0;
  std::string split;  // alltoallv's split, "" otherwise
  auto operator<=>(const ReferenceCase&) const = default;
};
ReferenceCase reference_case_of(const ResultRecord& r);

// Healthy launches of one library on one kind of machine.
struct HostReference {
  std::string source;     // where it came from: the built-in table's note, or a file
  std::string cpu_model;  // /proc/cpuinfo's model name
  int cpus = 0;
  std::string backend, library;
  int nranks = 0;
  std::vector<LaunchConditions> launches;
  std::map<ReferenceCase, std::vector<double>> busbw;  // per launch; NaN where it lacks one
};

// The machine a result file was measured on (its first host's roof facts) and its launch's
// conditions (the median over its launches for a `run --repeat` summary).
struct MachineOf {
  std::string cpu_model;
  int cpus = 0;
};
MachineOf machine_of(const ResultFile& f);
LaunchConditions conditions_of(const ResultFile& f);

// The references of a healthy result file (one per backend and library in it; each launch of a
// `run --repeat` summary a launch of the reference); a usage Error naming the file where it cannot
// be one (several hosts, no control measurement, no machine facts).
std::vector<HostReference> host_references_from(const ResultFile& f);
// The table compiled in from report/check/host_references.json (schema
// commbench/host-references/v1).
const std::vector<HostReference>& builtin_host_references();
// Parses such a table; `source` names it in messages.
std::vector<HostReference> parse_host_references(const nlohmann::json& doc,
                                                 const std::string& source);

// How many reference launches must agree with the judged launch's control, and how far apart the
// healthy launches may lie (highest / lowest of their figures against their median) for a 2x
// slower node to fall below the threshold.
inline constexpr int kMinReferenceLaunches = 5;
inline constexpr double kMaxHealthySpread = 1.6;
// A launch is judged, and a reference launch counts, only on a quiet host: a load average at its
// start of at most this per CPU (the launch's own ranks included), and the hypervisor's steal at
// most this share of the CPU time.
inline constexpr double kQuietLoadPerCpu = 1.5;
inline constexpr double kMaxStealFraction = 0.05;

struct HostJudgement {
  bool judged = false;
  bool passed = false;
  std::string measured;  // "allreduce: busbw 2.6 GB/s at 32-64 MiB, 0.48 of ..." or why not
  std::string expected;
  // The figures: the run's ratio to the reference median, the healthy launches' range, the
  // threshold between them.
  double ratio = 0, healthy_low = 0, healthy_high = 0, threshold = 0;
  int launches = 0;  // reference launches whose control agreed
};

// `records`: one collective of one backend and algorithm from one file (its launch `run`, its
// machine `machine`), judged against `references`.
HostJudgement judge_against_references(const std::vector<const ResultRecord*>& records,
                                       const MachineOf& machine, const LaunchConditions& run,
                                       const std::vector<HostReference>& references);

}  // namespace cb
