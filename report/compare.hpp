// Comparing two result files: match records by what was measured, decide per match whether the
// change is a regression, an improvement, noise or nothing, and list what only one side has.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <vector>

#include "common/record.hpp"
#include "report/result_reader.hpp"

namespace cb {

// What identifies a measurement across runs (everything but the measured figures).
struct RecordKey {
  std::string collective, backend, algorithm, dtype, op, placement;
  int root = -1;
  int nranks = 0;
  std::uint64_t bytes = 0;
  std::string env;  // `tune --env` combination, "" otherwise
  auto operator<=>(const RecordKey&) const = default;
};

RecordKey key_of(const ResultRecord& r);
// "allreduce mpi/default float sum out 2 ranks 1 MiB" (root only where there is one).
std::string describe(const RecordKey& k);

struct CompareOptions {
  double threshold = 0.05;                  // relative change that counts (5 %)
  double noise_factor = 1.0;                // band = factor x max(spread_base, spread_new)
  std::uint64_t latency_bytes = 64 * 1024;  // below this size time is compared, else busbw
  bool fail_on_missing = false;             // records only in BASE count as regressions
  double alpha = 0.05;  // false discovery rate of the significance test over all records
};

enum class Metric { Busbw, Time };
enum class Verdict { Regression, Improvement, Noise, Unchanged };

const char* metric_name(Metric m);    // "busbw" or "time"
const char* verdict_name(Verdict v);  // "regression", "improvement", "noise", "unchanged"

// A record's run-to-run noise proxy: how far its slowest 1 % of iterations sit above the median,
// (p99 - p50) / p50. Robust to the single extreme outliers that inflate cv.
double spread(const ResultRecord& r);

struct Side {
  double value = 0;  // the compared figure: busbw in GB/s or mean time in us
  double p50_us = 0;
  double p99_us = 0;
  double cv = 0;
  double spread = 0;
  int runs = 1;                // repetitions (launches) of this measurement on this side
  int outlier_runs = 0;        // of those, how many had outliers (has_outliers)
  std::vector<double> values;  // the compared figure of each repetition
};

// How a comparison was judged: over repetitions with a significance test, or, with one
// repetition on a side, by the single-launch noise-band rule.
enum class Method { UTest, NoiseBand };
const char* method_name(Method m);  // "u-test" or "noise-band"

struct Comparison {
  RecordKey key;
  Metric metric = Metric::Time;
  Side base, next;
  double change = 0;        // next / base - 1 of the compared figure
  double worse = 0;         // fraction worse, positive = regression direction
  double median_worse = 0;  // the same computed from p50 times
  double noise = 0;         // noise band as a fraction
  Method method = Method::NoiseBand;
  double p_value = 1;  // u-test: one-sided p of a change in the observed direction
  double q_value = 1;  // the same after the Benjamini-Hochberg correction over all records
  int support = 0;     // neighbouring sizes (0-2) of the same series that moved the same way
  Verdict verdict = Verdict::Unchanged;
};

struct CompareReport {
  std::string base_path, new_path;
  CompareOptions options;
  std::vector<Comparison> rows;  // in key order
  std::vector<RecordKey> base_only, new_only;
  std::vector<std::string> warnings;  // different hardware, hosts, libraries, settings
  std::vector<std::string> notes;     // things not compared and why

  int count(Verdict v) const;
  int regressions() const;      // including one-sided records when fail_on_missing
  std::string summary() const;  // one line: "12 compared: 1 regression, ..."
  // Rows for reports: regressions, improvements, noise, unchanged; regressions and improvements
  // with the most neighbouring-size support first, then by size of the change; key order else.
  std::vector<const Comparison*> ordered() const;
};

// BASE may be several files (a history of earlier runs): their repetitions are pooled.
CompareReport compare_results(const std::vector<ResultFile>& base, const ResultFile& next,
                              const CompareOptions& options);
CompareReport compare_results(const ResultFile& base, const ResultFile& next,
                              const CompareOptions& options);

}  // namespace cb
