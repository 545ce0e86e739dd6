// The result record: everything a writer needs about one measured case, and the table of its
// fields that every format (CSV, JSON) writes and reads by.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/launch_control.hpp"
#include "common/schema.hpp"

namespace cb {

// Every rank's time for one case, each its own mean per iteration (time_us is the largest):
// their spread and where the slowest ran. JSON and JSONL only, as `rank_time_us`. With several
// GPUs per process, a process's GPUs are timed together and count as one rank, its first.
struct RankTimes {
  double min_us = 0, median_us = 0, max_us = 0;  // median: the mean of the middle two if even
  int slowest_rank = 0;                          // the lowest rank among equally slow ones
  std::string slowest_host;
  std::optional<int> slowest_gpu;   // its local GPU index, where its process drives one GPU
  std::optional<int> slowest_core;  // its CPU core, where its process is bound to exactly one
  bool operator==(const RankTimes&) const = default;
};

// How late the ranks entered one case's timed calls, on a common clock
// (collectives/engine/lateness.hpp): the rank the others waited for the most, what that cost
// them, and the call's own time once every rank had entered. JSON and JSONL only, as `lateness`.
struct CaseLateness {
  std::uint64_t calls = 0;  // calls judged: the timed calls, the first of each batch aside
  int rank = 0;             // the rank whose lateness cost the others the most waiting
  std::string host;
  double last_share = 0;      // the share of the calls it entered last
  double late_us = 0;         // its entry - the earliest entry, mean per call
  double delay_cost = 0;      // the others' wait it caused, over the others' time
  double wait_us = 0;         // a rank's wait in a call for the rank it needed, mean
  double inside_us = 0;       // the earliest exit - the last entry (the call with all in), mean
  double clock_error_us = 0;  // the most two ranks' stamps may be off against each other
  bool operator==(const CaseLateness&) const = default;
};

// The run's judgement of a straggling rank (collectives/engine/straggler.hpp): the rank the
// others waited for, how often it entered the calls last, how late, and what that cost them.
// JSON only, as meta `straggler`.
struct RankStraggler {
  bool found = false;  // the rule tripped (docs/method.md): run warns on stderr
  int rank = 0;        // the rank whose lateness cost the others the most (the lowest on a tie)
  std::string host;
  std::optional<int> gpu;   // as in RankTimes
  std::optional<int> core;
  int slowest_cases = 0;  // cases in which it cost the others the most waiting
  int cases = 0;          // cases judged: more than one rank, calls that synchronise
  double ratio = 0;       // median over those cases of its time per call / the median rank's
  // What the rule judges, over every judged call of every case:
  std::string component = "rank";  // "host": every rank of its host entered late together
  std::vector<int> host_ranks;     // with "host": that host's ranks
  std::uint64_t calls = 0;         // calls judged
  std::uint64_t last_calls = 0;    // calls it (with "host": one of its host's ranks) entered last
  int participants = 0;            // the ranks (with "host": the hosts) that could enter last
  double late_us = 0;              // its entry - the earliest entry, mean per call
  double delay_cost = 0;           // the others' wait it caused, over the others' time
  double wait_us = 0;              // that wait, mean per call and per other rank
  double between_us = 0;           // its own time between calls, mean per call
  double late_exit_us = 0;         // its exit - the earliest exit, mean per call
  double inside_us = 0;            // the call with every rank in, mean per call
  double clock_error_us = 0;       // the most its stamps may be off against another rank's
  std::string where;               // "before the call" or "inside the call": where it lost time
  bool operator==(const RankStraggler&) const = default;
};

struct ResultRecord {
  std::string backend;    // mpi, gloo, nccl
  std::string library;    // library name and version, e.g. "Open MPI 4.1.4"
  std::string algorithm;  // "default" or the forced algorithm's name
  std::string collective;
  std::string dtype;
  std::string op;         // "none" for collectives that do not reduce
  std::string placement;  // "out", "in", or "none" (barrier)
  int root = -1;          // -1 where the collective has no root
  int nranks = 0;
  int nnodes = 0;
  std::uint64_t bytes = 0;  // nccl-tests convention: max(send, recv) bytes of one rank
  std::uint64_t count = 0;  // elements per rank (per peer for alltoall)
  std::uint64_t iters = 0;  // timed iterations
  double time_us = 0;       // mean per operation, slowest rank
  double min_us = 0, p50_us = 0, p99_us = 0, max_us = 0;  // per-iteration, max over ranks
  double cv = 0;                                          // stdev / mean of those samples
  std::optional<double> algbw_GBps;                       // empty for barrier
  std::optional<double> busbw_GBps;
  std::optional<std::uint64_t> wrong;  // empty when not checked
  // Each rank's time (written outside the field table, JSON only); empty where not measured
  // (files written before it, and summaries over repetitions, whose launches each have theirs).
  std::optional<RankTimes> rank_time;
  // How late the ranks entered the calls (JSON only, like rank_time); empty where not judged.
  std::optional<CaseLateness> lateness;
  // `tune --env`: the environment combination of the job, "NAME=VALUE NAME2=VALUE2"; "" else.
  std::string env;
  // `run --repeat N`: the repetition (launch) this record comes from, 0-based; empty otherwise.
  std::optional<int> repeat;
  // The expected-performance model (report/roof/roof.hpp): the ceiling on busbw for this case on
  // this hardware, busbw / roof where bandwidth dominates, and the facts the roof came from.
  std::optional<double> roof_GBps;
  std::optional<double> efficiency;
  std::string roof_basis;
  // Memory the ranks page-faulted in per timed call (minor faults x page size), the most of any
  // rank: a library that maps its buffers afresh on every call shows here, and is then bound by
  // its allocator rather than by the memory system the roof describes. Empty where not measured.
  std::optional<double> fault_bytes;
  // Why the case's slow iterations were slow, where commbench can tell (the k...Cause values
  // below); "" otherwise, and where its figures show no slow calls.
  std::string outlier_cause;
  // alltoallv: its split ("uniform", "zipf:1.2", ...; "" for the other collectives), its
  // matrix's incast factor and send skew (the most a rank receives / sends over the mean), the
  // share of token copies a moe router dropped over capacity, the time of the uniform split of
  // the same total measured beside it, and this case's time over that one (the imbalance tax).
  std::string split;
  std::optional<double> incast;
  std::optional<double> send_skew;
  std::optional<double> imbalance_tax;
  std::optional<double> uniform_us;
  std::optional<double> drop_share;
  // The distribution-free 99 % confidence interval of p50_us from the case's own per-iteration
  // samples (order statistics; min and max where fewer than 8 samples cannot reach 99 %): what
  // one launch knows of its median, for compare with one launch a side. Empty in older files.
  std::optional<double> p50_low_us, p50_high_us;
  // A summary over repetitions: the figures above are medians over these, one per launch (each
  // with its `repeat`); empty for a record of one launch.
  std::vector<ResultRecord> repeats;
};

// A case whose figures show slow calls: mean above kOutlierMeanFactor x p50, or p99 above
// kOutlierTailFactor x p50 (the time of a few iterations dominated by something else).
inline constexpr double kOutlierMeanFactor = 1.5;
inline constexpr double kOutlierTailFactor = 10;
bool shows_slow_calls(const ResultRecord& r);
// A case with outliers: its figures show slow calls that are not the library's own rhythm
// (outlier_cause kSteadyCause), which recurs through the whole measurement, so its mean holds it
// as every launch would: the figure, not interference.
bool has_outliers(const ResultRecord& r);
// outlier_cause's values: slow iterations that ran in timed batches that took page faults; that
// ran in batches where a rank's thread was switched out (another thread or process took its
// core); that ran in batches with neither, recurring through the whole measurement.
inline constexpr const char* kPageFaultCause = "page faults";
inline constexpr const char* kPreemptedCause = "preempted";
inline constexpr const char* kSteadyCause = "in every batch";

// What a row of the field table says beyond its name and type.
enum RecordFieldFlags : unsigned {
  kSigned = 1u << 0,  // an integer that may be negative (root: -1); other integers are counts
  kLater = 1u << 1,   // a column added after the first ones: files written before lack it, and
                      // reading such a file leaves the field empty
  kFigure = 1u << 2,  // a measured figure: also written for each launch of a summary over repeats
};

// One field of the result record: its name (CSV column, JSON key), where its value comes from
// and what it may hold. The type says how it is written and read:
//   std::string                 as is; JSON string
//   int, std::uint64_t          decimal integer, non-negative unless kSigned
//   double                      finite, non-negative; CSV "%.6g"
//   std::optional<...>          empty: JSON null, CSV empty field (e.g. no bandwidth for barrier)
//   bool (*)(const ResultRecord&)  derived from the other fields: written "true"/"false", never
//                               read back
struct RecordField {
  std::string_view name;
  std::variant<std::string ResultRecord::*, int ResultRecord::*, std::uint64_t ResultRecord::*,
               double ResultRecord::*, std::optional<double> ResultRecord::*,
               std::optional<std::uint64_t> ResultRecord::*, bool (*)(const ResultRecord&)>
      value;
  unsigned flags = 0;
};

// clang-format off
// The result record's fields in contract order: the one description that CSV and JSON writing and
// reading follow. A new field is one row here (and its member above); new columns go at the end,
// flagged kLater. The repetition fields (`repeat`, `repetitions`, `repeats`), `rank_time_us`
// and `lateness` are JSON only and written after these (see to_json).
inline constexpr RecordField kResultFields[] = {
    {"backend",    &ResultRecord::backend},
    {"library",    &ResultRecord::library},
    {"algorithm",  &ResultRecord::algorithm},
    {"collective", &ResultRecord::collective},
    {"dtype",      &ResultRecord::dtype},
    {"op",         &ResultRecord::op},
    {"placement",  &ResultRecord::placement},
    {"root",       &ResultRecord::root,       kSigned},
    {"nranks",     &ResultRecord::nranks},
    {"nnodes",     &ResultRecord::nnodes},
    {"bytes",      &ResultRecord::bytes},
    {"count",      &ResultRecord::count},
    {"iters",      &ResultRecord::iters,      kFigure},
    {"time_us",    &ResultRecord::time_us,    kFigure},
    {"min_us",     &ResultRecord::min_us,     kFigure},
    {"p50_us",     &ResultRecord::p50_us,     kFigure},
    {"p99_us",     &ResultRecord::p99_us,     kFigure},
    {"max_us",     &ResultRecord::max_us,     kFigure},
    {"cv",         &ResultRecord::cv,         kFigure},
    {"algbw_GBps", &ResultRecord::algbw_GBps, kFigure},
    {"busbw_GBps", &ResultRecord::busbw_GBps, kFigure},
    {"wrong",      &ResultRecord::wrong,      kFigure},
    {"env",        &ResultRecord::env,        kLater},
    {"outliers",   &has_outliers,             kLater},
    {"roof_GBps",  &ResultRecord::roof_GBps,  kLater},
    {"efficiency", &ResultRecord::efficiency, kLater},
    {"roof_basis", &ResultRecord::roof_basis, kLater},
    {"fault_bytes", &ResultRecord::fault_bytes, kLater | kFigure},
    {"outlier_cause", &ResultRecord::outlier_cause, kLater},
    {"split",         &ResultRecord::split,         kLater},
    {"incast",        &ResultRecord::incast,        kLater},
    {"send_skew",     &ResultRecord::send_skew,     kLater},
    {"imbalance_tax", &ResultRecord::imbalance_tax, kLater | kFigure},
    {"uniform_us",    &ResultRecord::uniform_us,    kLater | kFigure},
    {"drop_share",    &ResultRecord::drop_share,    kLater},
    {"p50_low_us", &ResultRecord::p50_low_us, kLater | kFigure},
    {"p50_high_us", &ResultRecord::p50_high_us, kLater | kFigure},
};
// clang-format on

// Column names in contract order (CSV header, JSON keys).
inline constexpr auto kResultColumns = [] {
  std::array<std::string_view, std::size(kResultFields)> names{};
  for (std::size_t i = 0; i < names.size(); ++i) names[i] = kResultFields[i].name;
  return names;
}();

// The columns every result file has: those before the first kLater one.
inline constexpr std::size_t kResultColumnsRequired = [] {
  std::size_t n = 0;
  while (n < std::size(kResultFields) && !(kResultFields[n].flags & kLater)) ++n;
  return n;
}();

// Whether `header` is a result CSV header: every column, or a file written before the later
// columns, which ends after the required ones or at one of the later ones.
bool result_csv_header(const std::vector<std::string>& header);

// Run-wide facts written once per file.
struct RunMeta {
  std::string version;
  std::string git_commit;
  std::string start_time;  // ISO 8601 UTC
  std::string command_line;
  std::vector<std::string> hosts;  // distinct, in rank order of first appearance
  int nranks = 0;
  int nnodes = 0;
  int ranks_per_node = 0;                          // max over nodes
  std::map<std::string, std::string> libraries;    // backend -> "name version"
  std::map<std::string, std::string> environment;  // communication-steering variables only
  std::map<std::string, std::string> launcher;     // "kind" and the job's SLURM_* shape
  // Without -B: the backends chosen and why, "mpi,gloo (no -B): no GPU backend here (...)".
  std::string backend_choice;
  nlohmann::json topology;  // summary, null when not probed
  int repetitions = 0;      // `run --repeat N`: launches summarised; 0 for a single launch
  // Steering variables whose value differs between rank 0 and another rank (at most 20 lines).
  std::vector<std::string> environment_mismatch;
  // `tune --env`: combinations whose job failed, "LABEL: reason" (JSON only, when any).
  std::vector<std::string> env_failures;
  // A summary written by a sweep that did not end (an interrupted `tune --env`): {"exit_code",
  // "reason"} as on a stream's incomplete line; null for a whole run. Readers refuse to judge it.
  nlohmann::json incomplete;
  // Each launch's control measurement (one for a single launch, one per repetition of --repeat).
  std::vector<LaunchControl> launches;
  // The straggler judgement of a single launch with more than one rank; empty otherwise (a
  // summary over several jobs: each job warns on its own).
  std::optional<RankStraggler> straggler;
  // alltoallv's splits as measured: `splits` (their names), `seed` and `moe_hidden`; null when
  // no alltoallv ran.
  nlohmann::json split;
};

void to_json(nlohmann::json& j, const ResultRecord& r);
void from_json(const nlohmann::json& j, ResultRecord& r);  // throws a usage Error on bad fields
void to_json(nlohmann::json& j, const RunMeta& m);
void from_json(const nlohmann::json& j, RunMeta& m);

// The algorithm with the record's environment combination, "ring [NCCL_BUFFSIZE=4194304]", as
// tables and charts name a series; the algorithm alone when there is none.
std::string series_algorithm(const ResultRecord& r);

// The record as JSON with keys in contract (column) order, for files people read.
nlohmann::ordered_json ordered_json(const ResultRecord& r);

// Values as CSV fields, in kResultColumns order (empty string for empty optionals).
std::vector<std::string> record_fields(const ResultRecord& r);
// Inverse of record_fields; `where` names the source for error messages.
ResultRecord record_from_fields(const std::vector<std::string>& fields, std::string_view where);

}  // namespace cb
