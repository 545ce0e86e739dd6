// compare with one launch a side: each record judged against the others of its own launch (its
// log median minus the launch's median record, so that a mode that moves the whole launch
// cancels), with an interval from the launch's own per-iteration samples (the order-statistic
// interval of each median, p50_low_us .. p50_high_us) widened by how far the two launches' records
// scatter apart as a whole (the robust spread of all records' changes). A change is a regression
// only where its interval clears the floor at a record and at a neighbouring size of the same
// series, as a change of the library does and one record's bad luck does not; a change beyond
// the floor that cannot be decided is left for more launches to tell.
#pragma once

#include <cstdint>
#include <vector>

#include "report/launch_statistics.hpp"

namespace cb {

// A record's median on one side and its interval, with the number of samples behind it.
struct MedianWithInterval {
  double p50 = 0, low = 0, high = 0;
  std::uint64_t samples = 0;
};

// The standard error of log(median), read back from the interval: half its log width over the
// normal quantile of the coverage its ranks give with `samples` samples. 0 for a point interval.
double log_median_se(const MedianWithInterval& m);

struct SingleLaunchInput {
  MedianWithInterval base, next;
  std::size_t series = 0;  // records of one series (all but the size equal), by size within it
  std::uint64_t bytes = 0;
};

// Fewer records than this cannot say how far a launch's records scatter: no regression then.
inline constexpr std::size_t kSingleLaunchMinRecords = 8;

struct SingleLaunchRow {
  double ratio = 1, low = 0, high = 0;  // new / base after each launch's median record
  Change change = Change::Same;         // Slower/Faster: beyond the floor here and at a neighbour
  bool beyond = false;                  // |ratio| past the floor, decided or not
  bool clears = false;                  // its interval clears the floor (with or without support)
};

struct SingleLaunchResult {
  std::vector<SingleLaunchRow> rows;  // as the inputs
  double scatter = 0;  // the robust spread (log) of all records' changes: 1.4826 x their MAD
  double level = 1;    // geometric mean over the records of new / base (what the shape cancels)
  bool enough_records = false;
};

// `floor` > 1 (1.25: a quarter slower), `confidence` two-sided per record (0.99).
SingleLaunchResult judge_single_launch(const std::vector<SingleLaunchInput>& inputs, double floor,
                                       double confidence);

}  // namespace cb
