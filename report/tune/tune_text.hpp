// tune's text for people: per size its candidates, one line each, and a commented table of what
// to use per size range.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

#include "common/record.hpp"
#include "common/tune_range.hpp"

namespace cb {

// How many candidates per size the candidate lines show, the fastest first (the current
// default is shown besides when it is not among them).
inline constexpr std::size_t kShownCandidates = 3;

// Per backend, collective, dtype, op, placement, root and rank count, then per size: one line
// per candidate (algorithm, with its environment combination under tune --env), the fastest
// validated first, at most `shown` of them and the current default; its time, p50, busbw, its
// speed over the current default (the default algorithm in the current environment) and its
// wrong elements.
void print_candidates(const std::vector<ResultRecord>& records, std::size_t shown,
                      std::ostream& out);

// The advice as a commented table: per backend, collective, dtype, op and placement, what to use
// in each size range, its speedup over default and the noise margin it had to beat.
void print_advice(const std::vector<TuneRange>& ranges, const std::string& what, std::ostream& out);

}  // namespace cb
