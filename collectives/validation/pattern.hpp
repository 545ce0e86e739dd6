// Validation data: every rank's input is a periodic sequence of small values chosen so that any
// reduction over all ranks is exact in every dtype and in any order. Inputs depend on the rank, the
// element index and a seed (which the runner derives from the case and iteration), so a block
// from the wrong rank, a stale buffer or a mis-ordered reduction all show up as wrong elements.
// Average: at each index one rank holds a value and the others zero; on floating types the value
// is one whose average comes out the same premultiplied (NCCL) or summed then divided (see
// avg_rounding.hpp), so the expected result is exact either way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "collectives/catalogue/catalogue.hpp"
#include "collectives/catalogue/dtype.hpp"

namespace cb {

// The byte every output element is filled with before a validated call, so an element the call
// never wrote is counted wrong. No expected value of any case can equal an element made of it:
// all-ones bytes are NaN in every floating type (half, bfloat16, float, double, fp8 e4m3 and
// e5m2), -1 in the signed integers (expected values are never negative), and the type's largest
// value in the unsigned ones, which the pattern keeps every input and reduction below.
extern const unsigned char kUnwrittenMarker;  // 0xFF (pattern.cpp)

// Encoded values of one periodic sequence, stored twice over so that any rotation of one period
// is contiguous: element s of the sequence is data[(s % period) ...].
struct PeriodicTable {
  const std::byte* data = nullptr;  // 2 x period elements
  std::size_t element_size = 0;
  std::size_t period = 0;
};

class Pattern {
 public:
  static constexpr std::size_t kPeriod = 1021;  // prime: misplaced blocks rarely line up

  Pattern(DType dtype, ReduceOp op, int nranks, std::uint64_t seed);

  // The value of element `index` of rank `rank`'s input (an integer but for avg on floating
  // types).
  double input_value(int rank, std::uint64_t index) const;
  // The value of element `index` of the reduction over all ranks.
  double reduced_value(std::uint64_t index) const;

  PeriodicTable input_table(int rank);  // built on first use
  PeriodicTable reduced_table();
  PeriodicTable table_for(const Segment& s) {
    return s.reduced ? reduced_table() : input_table(s.source);
  }

  DType dtype() const { return dtype_; }

 private:
  PeriodicTable encode(std::vector<std::byte>& storage, auto value_of);
  int avg_holder(std::uint64_t k) const;     // the rank holding index k's value
  double avg_input(std::uint64_t k) const;   // that value
  double avg_result(std::uint64_t k) const;  // the average

  DType dtype_;
  ReduceOp op_;
  int nranks_;
  std::uint64_t seed_;
  std::int64_t modulus_;
  const std::vector<std::pair<double, double>>* avg_values_ = nullptr;  // (input, average)
  std::map<int, std::vector<std::byte>> inputs_;
  std::vector<std::byte> reduced_;
};

// Host-memory fill and check against a table; src_offset is the sequence index of element 0.
void fill_periodic(void* dst, std::uint64_t count, const PeriodicTable& t,
                   std::uint64_t src_offset);
std::uint64_t count_wrong_periodic(const void* buf, std::uint64_t count, const PeriodicTable& t,
                                   std::uint64_t src_offset);

}  // namespace cb
