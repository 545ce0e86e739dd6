// Statistics for judging measurements over launches. The launch is the sample: each launch gives
// one figure per measurement (its own median), machines move whole launches together (a fast and
// a slow mode), so figures are compared on a log scale, continuously (Welch's t, no rank test),
// with an effect floor beside the confidence bound, and "inconclusive" as an outcome of its own.
//
// Used by compare (the shape and level tests, the control gate, thresholds from a history) and by
// check; a candidate's per-launch values against a reference's is judge_launches().
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/median.hpp"

namespace cb {

// Sample standard deviation (n - 1); 0 for fewer than two values.
double stddev_of(const std::vector<double>& values);

// Student's t distribution: P(T <= t) with `df` degrees of freedom (df > 0, not necessarily an
// integer), and its inverse for 0 < p < 1.
double student_t_cdf(double t, double df);
double student_t_quantile(double p, double df);

// Welch's interval for mean(candidate) - mean(reference) at two-sided `confidence` (unequal
// variances, Welch-Satterthwaite degrees of freedom). Needs two values a side; with no spread
// at all on both sides the interval is the difference itself.
struct WelchInterval {
  double difference = 0, low = 0, high = 0;
  double df = 0;  // degrees of freedom (0 without spread)
  double se = 0;  // standard error of the difference
};
WelchInterval welch_interval(const std::vector<double>& reference,
                             const std::vector<double>& candidate, double confidence);

// The geometric mean of positive per-launch figures with its two-sided confidence interval (the
// t interval of the mean log); low = high = the mean with one launch or no spread.
struct GeometricInterval {
  double mean = 0, low = 0, high = 0;
  int launches = 0;
};
GeometricInterval geometric_interval(const std::vector<double>& values, double confidence);

// What a comparison of a candidate with a reference found.
enum class Change {
  Slower,       // the ratio's lower confidence bound is above the floor
  Faster,       // the upper bound is below 1 / floor
  Same,         // neither: any change is within the floor or within the noise
  Inconclusive  // cannot be judged (too few launches, or figures that are not positive)
};
const char* change_name(Change c);  // "slower", "faster", "same", "inconclusive"

struct EffectRule {
  double floor = 1.25;       // the smallest ratio that counts
  double confidence = 0.99;  // two-sided, for the whole family
  int family = 1;            // comparisons judged together: each at 1 - (1 - confidence) / family
};

struct RatioVerdict {
  Change change = Change::Inconclusive;
  double ratio = 1;  // candidate / reference: exp of the difference of mean logs
  double low = 0;    // its confidence bounds
  double high = 0;
  int reference_launches = 0, candidate_launches = 0;
  std::string why;  // for Inconclusive: what was missing
};

// Per-launch figures (positive, larger = slower: times) of a reference and a candidate, compared
// on their logarithms: Welch's interval of the candidate / reference ratio at the rule's
// (Bonferroni-corrected) confidence, then the floor.
RatioVerdict judge_launches(const std::vector<double>& reference,
                            const std::vector<double>& candidate, const EffectRule& rule);
// The same on values that are already logarithms (shape and level values).
RatioVerdict judge_log_launches(const std::vector<double>& reference,
                                const std::vector<double>& candidate, const EffectRule& rule);

// A table of log figures: rows are launches, columns measurements; NaN where a launch lacks one.
using LogTable = std::vector<std::vector<double>>;

// The shape of each launch: every log figure minus that launch's median over its measurements.
// A machine mode that moves every measurement of a launch alike cancels; a change confined to
// some measurements stays.
LogTable shape_of(const LogTable& launches);

// The level of each launch: the mean of its log figures (log of the geometric mean) over the
// measurements it has all of; NaN when it lacks any.
std::vector<double> level_of(const LogTable& launches);

// A launch's control measurement, as compare needs it (0 = not measured).
struct ControlFigures {
  double pingpong_ns = 0;
  double compute_us = 0;
  bool known() const { return pingpong_ns > 0 && compute_us > 0; }
};

// The control gate: the largest set of launches, on both sides, whose controls agree with each
// other within the tolerances (each figure's max / min over the set), chosen to have the most
// launches on the smaller side. `matched` when each side has at least `needed` launches in it
// (or all of its launches, when it has fewer); `why` then says nothing, else it says what
// differed, with the figures, and what to do.
struct ControlMatch {
  bool matched = false;
  std::vector<std::size_t> reference, candidate;  // indices of the agreeing launches
  std::string why;
};
ControlMatch match_control(const std::vector<ControlFigures>& reference,
                           const std::vector<ControlFigures>& candidate, double pingpong_tolerance,
                           double compute_tolerance, int needed = 3);

// A record's threshold from its own history: the ratio exp(Q3 + 3 x IQR) of the absolute
// night-to-night changes of its log figure (one per night, in order); 0 with fewer than
// kHistoryNights nights.
inline constexpr int kHistoryNights = 10;
double history_threshold(const std::vector<double>& nightly_logs);

// Quartiles by linear interpolation between order statistics (type 7, as R and numpy).
double quantile_of(std::vector<double> values, double q);

}  // namespace cb
