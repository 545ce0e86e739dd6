// The result record: everything a writer needs about one measured case.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/schema.hpp"

namespace cb {

// Column names in contract order (CSV header, JSON keys).
inline constexpr std::string_view kResultColumns[] = {
    "backend",   "library",    "algorithm",  "collective", "dtype",  "op",
    "placement", "root",       "nranks",     "nnodes",     "bytes",  "count",
    "iters",     "time_us",    "min_us",     "p50_us",     "p99_us", "max_us",
    "cv",        "algbw_GBps", "busbw_GBps", "wrong",      "env",    "outliers"};
// Files written before the later columns end earlier: at `wrong` (22) or at `env` (23).
inline constexpr std::size_t kResultColumnsBeforeEnv = 22;

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
  // `tune --env`: the environment combination of the job, "NAME=VALUE NAME2=VALUE2"; "" else.
  std::string env;
  // `run --repeat N`: the repetition (launch) this record comes from, 0-based; empty otherwise.
  std::optional<int> repeat;
  // A summary over repetitions: the figures above are medians over these, one per launch (each
  // with its `repeat`); empty for a record of one launch.
  std::vector<ResultRecord> repeats;
};

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
};

void to_json(nlohmann::json& j, const ResultRecord& r);
void from_json(const nlohmann::json& j, ResultRecord& r);  // throws a usage Error on bad fields
void to_json(nlohmann::json& j, const RunMeta& m);
void from_json(const nlohmann::json& j, RunMeta& m);

// A case whose samples show outliers: mean above kOutlierMeanFactor x p50, or p99 above
// kOutlierTailFactor x p50 (the time of a few iterations dominated by something else).
inline constexpr double kOutlierMeanFactor = 1.5;
inline constexpr double kOutlierTailFactor = 10;
bool has_outliers(const ResultRecord& r);

// The algorithm with the record's environment combination, "ring [NCCL_BUFFSIZE=4194304]", as
// tables and charts name a series; the algorithm alone when there is none.
std::string series_algorithm(const ResultRecord& r);

// The record as JSON with keys in contract (column) order, for files people read.
nlohmann::ordered_json ordered_json(const ResultRecord& r);

// Values as CSV fields, in kResultColumns order (empty string for empty optionals).
std::vector<std::string> record_fields(const ResultRecord& r);
// Inverse of record_fields; `where` names the source for error messages.
ResultRecord record_from_fields(const std::vector<std::string>& fields, std::string_view where);

// Whether an environment variable's name looks like it holds a secret: KEY, TOKEN, SECRET, PASS,
// CREDENTIAL, AUTH or PRIVATE anywhere in it, in any case. Such values are never written.
bool secret_name(std::string_view name);

// The environment variables that steer communication (NCCL_*, OMPI_MCA_*, MPIR_CVAR_*, UCX_*,
// CUDA_VISIBLE_DEVICES, ...), never the whole environment and never anything that looks secret.
std::map<std::string, std::string> steering_environment();
// Whether `name` is one of those variables.
bool steering_variable(std::string_view name);
// Lines naming each steering variable that differs between rank 0 and another rank, from every
// rank's steering_environment() as a JSON object (index = rank); at most 20.
std::vector<std::string> environment_mismatches(const std::vector<std::string>& per_rank);

}  // namespace cb
