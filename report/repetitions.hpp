// `run --repeat N`: records from N separate launches of one sweep, summarised per measurement.
#pragma once

#include <vector>

#include "common/record.hpp"

namespace cb {

// One record whose figures are medians over `group` (records of one measurement, one per
// launch): every figure the median of that figure over repetitions (the mean of the two middle
// values for an even count), iters rounded, `wrong` summed. `repeats` keeps every repetition.
ResultRecord summarize_repetitions(const std::vector<ResultRecord>& group);

// Every measurement of `records` (first-seen order) summarised over its repetitions.
std::vector<ResultRecord> summarize_all(const std::vector<ResultRecord>& records);

// The per-launch records behind a record: its `repeats` when it is a summary, else itself.
std::vector<ResultRecord> launches_of(const ResultRecord& r);

}  // namespace cb
