// The avg validation pattern against a host simulation of the two ways an average is computed:
// NCCL's premultiply (each input times 1/n rounded to the type, then a sum) and sum then divide,
// each accumulated in ring order from several starting ranks and in tree order, for every dtype
// and every rank count from 1 to 1024.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "collectives/validation/avg_rounding.hpp"
#include "collectives/validation/pattern.hpp"

namespace cb {
namespace {

// Sums in `t` (rounding after each addition); integers exactly. Adding an exact zero changes
// nothing in any type, so it is skipped (most inputs are zero).
struct Add {
  DType t;
  double operator()(double a, double b) const {
    if (b == 0) return a;
    if (a == 0) return b;
    return info(t).floating ? avg::round_to(t, a + b) : a + b;
  }
};

double ring(const std::vector<double>& v, int start, const Add& add) {
  const int n = static_cast<int>(v.size());
  double acc = v[static_cast<std::size_t>(start % n)];
  for (int i = 1; i < n; ++i) acc = add(acc, v[static_cast<std::size_t>((start + i) % n)]);
  return acc;
}

// Pairwise (tree) order, in place in `work`.
double tree(const std::vector<double>& v, std::vector<double>& work, const Add& add) {
  work = v;
  for (std::size_t len = work.size(); len > 1; len = (len + 1) / 2) {
    for (std::size_t i = 0; i + 1 < len; i += 2) work[i / 2] = add(work[i], work[i + 1]);
    if (len % 2) work[len / 2] = work[len - 1];
  }
  return work.front();
}

// Checks index k of an avg pattern in both orders; returns false after the first failure.
bool exact_at(const Pattern& p, DType t, int n, std::uint64_t k) {
  const Add add{t};
  static std::vector<double> in, scaled, work;
  in.resize(static_cast<std::size_t>(n));
  scaled.resize(in.size());
  for (int r = 0; r < n; ++r) {
    const double x = p.input_value(r, k);
    in[static_cast<std::size_t>(r)] = x;
    scaled[static_cast<std::size_t>(r)] = x == 0 ? 0.0 : avg::premultiply(t, x, n);
  }
  const double want = p.reduced_value(k);
  auto same = [&](double got, const char* how, int start = -1) {
    if (got == want) return true;
    ADD_FAILURE() << info(t).name << " n=" << n << " index " << k << ": " << how
                  << (start >= 0 ? " from rank " + std::to_string(start) : "") << " gives " << got
                  << ", the pattern expects " << want;
    return false;
  };

  const bool floating = info(t).floating;
  for (int start : {0, n / 2, n - 1}) {
    const double sum = ring(in, start, add);
    if (!same(floating ? avg::round_to(t, sum / n) : std::trunc(sum / n), "sum then divide, ring",
              start)) {
      return false;
    }
    // NCCL sums integers, then divides; floating types are premultiplied.
    if (floating && !same(ring(scaled, start, add), "premultiply, ring", start)) {
      return false;
    }
  }
  if (floating && (!same(tree(scaled, work, add), "premultiply, tree") ||
                   !same(avg::round_to(t, tree(in, work, add) / n), "sum then divide, tree"))) {
    return false;
  }
  // What is expected is what the type holds.
  unsigned char bytes[8];
  encode_value(t, want, bytes);
  return same(decode_value(t, bytes), "encoding");
}

TEST(AvgPattern, ExactInBothOrdersForEveryTypeAndRankCountUpTo1024) {
  for (const auto& ti : all_dtypes()) {
    for (int n = 1; n <= 1024; ++n) {
      Pattern p(ti.type, ReduceOp::Avg, n, 977);
      for (std::uint64_t k = 0; k < 8; ++k) ASSERT_TRUE(exact_at(p, ti.type, n, k));
    }
  }
}

// Every index of the period, at the rank counts where sum-then-divide expectations went wrong
// under NCCL's premultiply (float at 7, 13, 14, 15, 28, 30, 56, 60; half at 22, 41, 44), small
// counts and the largest.
TEST(AvgPattern, EveryIndexAtTheRankCountsThatFailedBefore) {
  for (const auto& ti : all_dtypes()) {
    for (int n :
         {1, 2, 3, 5, 6, 7, 9, 11, 13, 14, 15, 22, 28, 30, 41, 44, 56, 60, 255, 257, 1023, 1024}) {
      Pattern p(ti.type, ReduceOp::Avg, n, 12345);
      for (std::uint64_t k = 0; k < Pattern::kPeriod; ++k) ASSERT_TRUE(exact_at(p, ti.type, n, k));
    }
  }
}

// The pattern still tells ranks and indices apart: results are mostly non-zero and vary.
TEST(AvgPattern, ResultsAreNonZeroAndVaried) {
  for (DType t : {DType::Float, DType::Half, DType::BFloat16, DType::Double, DType::Int32}) {
    for (int n : {2, 7, 8, 44, 1000}) {
      Pattern p(t, ReduceOp::Avg, n, 3);
      std::set<double> seen;
      for (std::uint64_t k = 0; k < Pattern::kPeriod; ++k) seen.insert(p.reduced_value(k));
      EXPECT_GE(seen.size(), 8u) << info(t).name << " n=" << n;
      EXPECT_EQ(seen.count(0.0), 0u) << info(t).name << " n=" << n;
    }
  }
}

// The rounding model against values worked out by hand from NCCL's code.
TEST(AvgRounding, ScaleAndProductFollowNccl) {
  EXPECT_EQ(avg::nccl_scale(DType::Float, 7), static_cast<double>(1.0f / 7.0f));
  EXPECT_EQ(avg::nccl_scale(DType::Double, 7), 1.0 / 7.0);
  EXPECT_EQ(avg::nccl_scale(DType::Half, 3), 0.333251953125);   // 0x3555
  EXPECT_EQ(avg::nccl_scale(DType::BFloat16, 3), 0.333984375);  // 0x3eab
  EXPECT_EQ(avg::nccl_scale(DType::Fp8E5M2, 11), 0.09375);
  EXPECT_EQ(avg::nccl_scale(DType::Fp8E4M3, 1024), 0.0);  // 2^-10 ties to zero
  EXPECT_EQ(avg::nccl_scale(DType::Fp8E4M3, 1000), std::ldexp(1.0, -9));
  // float: 7 x (1/7 rounded) is not 1 exactly, so a sum-then-divide expectation is wrong.
  EXPECT_NE(avg::premultiply(DType::Float, 7 * 3.0, 7), 3.0);
  EXPECT_EQ(avg::premultiply(DType::Half, 8.0, 4), 2.0);
  EXPECT_EQ(avg::round_to(DType::Half, 1.0 + std::ldexp(1.0, -11)), 1.0);  // tie to even
  EXPECT_EQ(avg::round_to(DType::Fp8E4M3, 1000.0), 448.0);                 // saturates
  EXPECT_EQ(avg::round_to(DType::Half, std::ldexp(1.0, -24)), std::ldexp(1.0, -24));
  EXPECT_FALSE(avg::divide(DType::Half, 1.0 + std::ldexp(1.0, -11), 1).has_value());
  EXPECT_EQ(avg::divide(DType::Int32, 21, 7), 3.0);
  EXPECT_FALSE(avg::divide(DType::Int32, 20, 7).has_value());
}

}  // namespace
}  // namespace cb
