#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "collectives/validation/pattern.hpp"

namespace cb {
namespace {

std::vector<std::byte> filled(Pattern& p, int rank, std::uint64_t count, std::uint64_t offset = 0) {
  std::vector<std::byte> buf(count * info(p.dtype()).size);
  fill_periodic(buf.data(), count, p.input_table(rank), offset);
  return buf;
}

TEST(Pattern, FillMatchesValueFunctionAtAnyOffset) {
  Pattern p(DType::Int32, ReduceOp::Sum, 4, 17);
  auto buf = filled(p, 2, 5000, 333);
  for (std::uint64_t i = 0; i < 5000; ++i) {
    std::int32_t v;
    std::memcpy(&v, &buf[i * 4], 4);
    ASSERT_EQ(v, p.input_value(2, i + 333)) << i;
  }
}

TEST(Pattern, CheckAcceptsCorrectAndCountsEveryCorruptedElement) {
  Pattern p(DType::Float, ReduceOp::Max, 3, 5);
  auto buf = filled(p, 1, 4000);
  EXPECT_EQ(count_wrong_periodic(buf.data(), 4000, p.input_table(1), 0), 0u);
  // Corrupt three elements in different periods: exactly three are reported.
  for (std::uint64_t i : {0ull, 1500ull, 3999ull}) buf[i * 4 + 1] ^= std::byte{0x40};
  EXPECT_EQ(count_wrong_periodic(buf.data(), 4000, p.input_table(1), 0), 3u);
}

TEST(Pattern, DataFromTheWrongRankOrOffsetIsCaught) {
  Pattern p(DType::Int64, ReduceOp::None, 4, 9);
  auto from0 = filled(p, 0, 2048);
  EXPECT_GT(count_wrong_periodic(from0.data(), 2048, p.input_table(1), 0), 1000u);
  EXPECT_GT(count_wrong_periodic(from0.data(), 2048, p.input_table(0), 7), 1000u);
}

TEST(Pattern, SeedChangesTheData) {
  Pattern a(DType::Float, ReduceOp::Sum, 2, 1), b(DType::Float, ReduceOp::Sum, 2, 2);
  auto buf = filled(a, 0, 1000);
  EXPECT_GT(count_wrong_periodic(buf.data(), 1000, b.input_table(0), 0), 500u);
}

// The reduction of all ranks' inputs must stay exactly representable for every dtype and op.
TEST(Pattern, ReductionsAreExactForEveryTypeOpAndRankCount) {
  const DType types[] = {DType::Int8,   DType::Uint8,   DType::Int32,    DType::Uint32,
                         DType::Int64,  DType::Half,    DType::BFloat16, DType::Float,
                         DType::Double, DType::Fp8E4M3, DType::Fp8E5M2};
  // Avg has its own simulation of both orders (test_avg_pattern.cpp).
  const ReduceOp ops[] = {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Min, ReduceOp::Max};
  for (DType t : types) {
    for (ReduceOp op : ops) {
      for (int n : {1, 2, 3, 4, 7, 8, 64}) {
        SCOPED_TRACE(std::string(info(t).name) + " " + std::string(name(op)) +
                     " n=" + std::to_string(n));
        Pattern p(t, op, n, 12345);
        const std::int64_t limit = info(t).exact_limit;
        std::int64_t partial_max = 0;
        for (std::uint64_t k = 0; k < Pattern::kPeriod; ++k) {
          std::int64_t acc = op == ReduceOp::Prod ? 1 : 0;
          for (int q = 0; q < n; ++q) {
            auto v = static_cast<std::int64_t>(p.input_value(q, k));
            ASSERT_GE(v, 0);
            ASSERT_LE(v, limit);
            acc = op == ReduceOp::Prod ? acc * v : acc + v;
            partial_max = std::max(partial_max, acc);
          }
          auto r = static_cast<std::int64_t>(p.reduced_value(k));
          ASSERT_GE(r, 0);
          ASSERT_LE(r, limit);
          // Encoded and decoded, the expected value survives exactly.
          unsigned char buf[8];
          encode_integer(t, r, buf);
          ASSERT_EQ(decode_value(t, buf), static_cast<double>(r));
        }
        if (op == ReduceOp::Sum || op == ReduceOp::Prod) {
          EXPECT_LE(partial_max, limit);  // every partial sum/product is exact too
        }
      }
    }
  }
}

TEST(Pattern, InputsDependOnRank) {
  Pattern p(DType::Float, ReduceOp::Sum, 4, 3);
  int differing = 0;
  for (std::uint64_t k = 0; k < 100; ++k) differing += p.input_value(0, k) != p.input_value(1, k);
  EXPECT_GT(differing, 50);
}

TEST(Pattern, ReducedValuesFollowTheOperator) {
  Pattern sum(DType::Int32, ReduceOp::Sum, 3, 0), mx(DType::Int32, ReduceOp::Max, 3, 0);
  Pattern prod(DType::Int32, ReduceOp::Prod, 3, 0), avg(DType::Int32, ReduceOp::Avg, 3, 0);
  for (std::uint64_t k = 0; k < 50; ++k) {
    EXPECT_EQ(sum.reduced_value(k),
              sum.input_value(0, k) + sum.input_value(1, k) + sum.input_value(2, k));
    EXPECT_EQ(mx.reduced_value(k),
              std::max({mx.input_value(0, k), mx.input_value(1, k), mx.input_value(2, k)}));
    EXPECT_EQ(prod.reduced_value(k),
              prod.input_value(0, k) * prod.input_value(1, k) * prod.input_value(2, k));
    EXPECT_EQ(avg.reduced_value(k) * 3,
              avg.input_value(0, k) + avg.input_value(1, k) + avg.input_value(2, k));
  }
}

// How many elements of the expected values of every case with `nranks` ranks (the reduction and
// each sampled rank's input, for every dtype and op, data movement as the runner patterns it)
// equal an element whose every byte is `marker`.
std::uint64_t marker_collisions(unsigned char marker, int nranks, std::uint64_t seed) {
  std::vector<ReduceOp> ops = all_ops();
  ops.push_back(ReduceOp::None);
  std::vector<int> ranks;
  for (int r = 0; r < nranks; ++r) {
    if (nranks <= 8 || r < 2 || r == nranks / 2 || r == nranks - 1) ranks.push_back(r);
  }
  std::uint64_t hits = 0;
  for (const auto& t : all_dtypes()) {
    const std::vector<std::byte> element(t.size, std::byte{marker});
    auto count = [&](const PeriodicTable& table) {
      for (std::size_t k = 0; k < table.period; ++k) {
        hits += std::memcmp(table.data + k * t.size, element.data(), t.size) == 0;
      }
    };
    for (ReduceOp op : ops) {
      Pattern p(t.type, op == ReduceOp::None ? ReduceOp::Max : op, nranks, seed);
      count(p.reduced_table());
      for (int r : ranks) count(p.input_table(r));
    }
  }
  return hits;
}

TEST(Pattern, UnwrittenMarkerEqualsNoExpectedValueOfAnyCase) {
  for (int n = 1; n <= 64; ++n) {
    for (std::uint64_t seed : {0ull, 1ull, 7919ull}) {
      ASSERT_EQ(marker_collisions(kUnwrittenMarker, n, seed), 0u) << n << " ranks, seed " << seed;
    }
  }
  for (int n : {96, 100, 127, 128, 255, 256, 257, 1000, 1024}) {
    ASSERT_EQ(marker_collisions(kUnwrittenMarker, n, 3), 0u) << n << " ranks";
  }
}

TEST(Pattern, MarkerCheckSeesACollidingMarker) {
  // 0xA5 is 165, a uint8 sum over 3 ranks: an unwritten element would pass as correct.
  EXPECT_GT(marker_collisions(0xA5, 3, 0), 0u);
}

}  // namespace
}  // namespace cb
