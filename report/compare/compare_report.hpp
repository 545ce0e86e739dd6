// What compare found: each matched measurement's comparison and verdict, the level test over
// every record, the new side's wrong elements, and the verdict in one line (verdict_line.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/record.hpp"
#include "report/launch_statistics.hpp"
#include "report/record_key.hpp"

namespace cb {

struct CompareOptions {
  double threshold = 0.25;  // effect floor of the shape test: a ratio beyond 1 + threshold (1.25x)
  double level_threshold = 0.05;  // effect floor of the level test (1.05x)
  double alpha = 0.01;      // 1 - confidence of each test (the shape test's over all records)
  double noise_factor = 1.0;                // one launch a side: band = factor x max spread
  std::uint64_t latency_bytes = 64 * 1024;  // below this size time is shown, else busbw
  bool fail_on_missing = false;             // records only in BASE count as regressions
};

enum class Metric { Busbw, Time };
enum class Verdict { Regression, Improvement, Noise, Unchanged };

const char* metric_name(Metric m);    // "busbw" or "time"
const char* verdict_name(Verdict v);  // "regression", "improvement", "noise", "unchanged"

// A record's run-to-run noise proxy: how far its slowest 1 % of iterations sit above the median,
// (p99 - p50) / p50. Robust to the single extreme outliers that inflate cv.
double spread(const ResultRecord& r);

struct Side {
  double value = 0;  // the shown figure: busbw in GB/s or mean time in us (median over launches)
  double p50_us = 0;
  double p99_us = 0;
  double cv = 0;
  double spread = 0;
  int runs = 1;                // launches of this measurement on this side
  int outlier_runs = 0;        // of those, how many had outliers (has_outliers)
  std::vector<double> values;  // the shown figure of each launch
};

// How a comparison was judged: over launches by the shape test; with one launch on a side, by the
// single-launch rule (report/compare/single_launch.hpp) on the interval of each median from its own
// iterations, or, for files without that interval (written before it), by the noise-band rule.
enum class Method { Shape, NoiseBand, SingleLaunch };
const char* method_name(Method m);  // "shape", "noise-band" or "single-launch"

struct Comparison {
  RecordKey key;
  Metric metric = Metric::Time;
  Side base, next;
  double change = 0;        // next / base - 1 of the shown figure
  double worse = 0;         // fraction worse, positive = regression direction
  double median_worse = 0;  // the same computed from p50 times
  double noise = 0;         // noise-band rule: the band as a fraction
  Method method = Method::NoiseBand;
  // Shape test: the p50 time ratio new / base after each launch's level is taken out, with its
  // family-wise confidence bounds, and the floor it was judged against (the single-launch rule:
  // the same ratio, with bounds from each median's own interval and the launches' scatter).
  double ratio = 1, ratio_low = 0, ratio_high = 0;
  double floor = 0;
  bool floor_from_history = false;  // the floor is this record's own night-to-night threshold
  int support = 0;  // neighbouring sizes (0-2) of the same series that moved the same way
  Verdict verdict = Verdict::Unchanged;
};

// The level test: every launch's geometric mean over the records both sides have, compared over
// the launches whose control measurement agrees between the sides.
struct LevelTest {
  bool judged = false;      // false with one launch a side
  bool gated = false;       // the control measurement was there to gate on
  bool matched = false;     // enough launches agreed (or no gate was possible)
  RatioVerdict verdict;     // ratio new / base of the geometric means
  double floor = 1.05;
  int base_launches = 0, new_launches = 0;  // of all, before the gate
  std::string why;          // not matched: what differed and what to do
};

// Invalid: the new side has records with wrong elements, so its timings are not judged.
enum class CompareOutcome { Ok, Regression, Inconclusive, Invalid };

// The new side's records with wrong > 0: their number and the first of them.
struct WrongRecords {
  int count = 0;
  RecordKey first;
  std::int64_t first_wrong = 0;
};

struct CompareReport {
  std::string base_path, new_path;
  CompareOptions options;
  std::vector<Comparison> rows;  // in key order
  std::vector<RecordKey> base_only, new_only;
  std::vector<std::string> warnings;  // different hardware, hosts, libraries, settings
  std::vector<std::string> notes;     // things not compared and why
  LevelTest level;
  // One launch a side: why the records so judged cannot be decided (the launches' controls
  // disagree or moved, a launch was disturbed, a change beyond the floor undecided); "" when they
  // can. Its line is the report's inconclusive verdict.
  std::string single_launch_why;
  double single_launch_level = 1;  // geometric mean of new / base over those records
  // Every such record slower alike beyond the floor, with agreeing controls: the regression is
  // the level's (each of those rows is marked a regression).
  bool single_launch_level_regression = false;
  WrongRecords wrong;      // on the new side
  int history_nights = 0;  // base files; from kHistoryNights on, floors come from the history
  CompareOutcome outcome = CompareOutcome::Ok;
  // The verdict in one line: "REGRESSION ...", "OK ...", "INCONCLUSIVE ...", "INVALID ...".
  std::string headline;

  int count(Verdict v) const;
  int regressions() const;      // including one-sided records when fail_on_missing
  std::string summary() const;  // one line: "12 compared: 1 regression, ..."
  // Rows for reports: regressions, improvements, noise, unchanged; regressions and improvements
  // with the most neighbouring-size support first, then by size of the change; key order else.
  std::vector<const Comparison*> ordered() const;
};

}  // namespace cb
