// DDP's bucket rule on hand-worked parameter lists. Each expected list was worked out by hand from
// the rule (reducer.cpp, compute_bucket_assignment_by_size with the gradient-ready order) and
// agrees with PyTorch 1.13.1's own function on the same lists
// (tests/integration/test_replay_torch.py checks the presets and generated lists against PyTorch
// itself where it is installed).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "collectives/patterns/ddp_buckets.hpp"
#include "common/error.hpp"

namespace cb {
namespace {

std::vector<Param> params(std::initializer_list<std::pair<std::uint64_t, DType>> list) {
  std::vector<Param> out;
  for (const auto& [n, t] : list) out.push_back({fmt::format("p{}", out.size()), t, n, {}, ""});
  return out;
}

std::vector<std::vector<std::size_t>> indices(const std::vector<DdpBucket>& buckets) {
  std::vector<std::vector<std::size_t>> out;
  for (const auto& b : buckets) out.push_back(b.params);
  return out;
}

constexpr std::uint64_t MiB = 1024 * 1024;

TEST(DdpBuckets, FirstBucketClosesAtTheTensorThatReachesOneMiBThenTheCapApplies) {
  // Ready order 4, 3, 2, 1, 0: 280000 B + 800000 B = 1080000 B >= 1 MiB closes the first
  // bucket; the rest (1200440 B) stays below the 25 MiB cap and is one bucket.
  const auto p = params({{100, DType::Float},
                         {300000, DType::Float},
                         {10, DType::Float},
                         {200000, DType::Float},
                         {70000, DType::Float}});
  const auto b = ddp_buckets(p, MiB, 25 * MiB);
  EXPECT_EQ(indices(b), (std::vector<std::vector<std::size_t>>{{4, 3}, {2, 1, 0}}));
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].bytes, 1080000u);
  EXPECT_EQ(b[0].numel, 270000u);
  EXPECT_EQ(b[1].bytes, 1200440u);
}

TEST(DdpBuckets, ABucketClosesWhenItsSizeEqualsTheLimit) {
  // 262144 floats are exactly 1 MiB: the first bucket closes with that one tensor.
  const auto p = params({{5, DType::Float}, {262144, DType::Float}, {262144, DType::Float}});
  EXPECT_EQ(indices(ddp_buckets(p, MiB, 25 * MiB)),
            (std::vector<std::vector<std::size_t>>{{2}, {1, 0}}));
}

TEST(DdpBuckets, LaterBucketsCloseAtTheCapAndMayExceedItByOneTensor) {
  // First 1 MiB, cap 2 MiB: 1.2 MB alone; 1.6 MB + 2.0 MB = 3.6 MB (over the cap by the tensor
  // that reached it); 2.4 MB alone; the last 4000 B left over.
  const auto p = params({{1000, DType::Float},
                         {600000, DType::Float},
                         {500000, DType::Float},
                         {400000, DType::Float},
                         {300000, DType::Float}});
  const auto b = ddp_buckets(p, MiB, 2 * MiB);
  EXPECT_EQ(indices(b), (std::vector<std::vector<std::size_t>>{{4}, {3, 2}, {1}, {0}}));
  EXPECT_EQ(b[1].bytes, 3600000u);
}

TEST(DdpBuckets, EachDtypeFillsItsOwnBucketsAndTheLeftoversFollowInReverseFirstAppearance) {
  // Ready order: 4 (f64), 3 (f16), 2 (f32), 1 (f16), 0 (f32). The f32 bucket reaches 1200400 B
  // at parameter 0 and closes; f16 (600200 B) and f64 (80 B) are left over, in the reverse
  // order of their dtypes' first parameters (f64, f16, f32 appeared in that order).
  const auto p = params({{300000, DType::Float},
                         {300000, DType::Half},
                         {100, DType::Float},
                         {100, DType::Half},
                         {10, DType::Double}});
  const auto b = ddp_buckets(p, MiB, 25 * MiB);
  EXPECT_EQ(indices(b), (std::vector<std::vector<std::size_t>>{{2, 0}, {3, 1}, {4}}));
  EXPECT_EQ(b[0].dtype, DType::Float);
  EXPECT_EQ(b[1].dtype, DType::Half);
  EXPECT_EQ(b[1].bytes, 600200u);
  EXPECT_EQ(b[2].dtype, DType::Double);
}

TEST(DdpBuckets, EveryDtypeHasItsOwnFirstBucketLimit) {
  // Each dtype's first bucket closes at 1 MiB, whatever the other dtype has closed already.
  const auto p = params({{300000, DType::Half}, {300000, DType::Float}, {600000, DType::Half}});
  // Ready: 2 (f16, 1.2 MB: closes f16's first), 1 (f32 1.2 MB: closes f32's first), 0 (f16 left).
  EXPECT_EQ(indices(ddp_buckets(p, MiB, 25 * MiB)),
            (std::vector<std::vector<std::size_t>>{{2}, {1}, {0}}));
}

TEST(DdpBuckets, CapsConvertAsDdpDoes) {
  EXPECT_EQ(ddp_bucket_bytes(25, "--bucket-cap-mb"), 25 * MiB);
  EXPECT_EQ(ddp_bucket_bytes(0.5, "--bucket-cap-mb"), MiB / 2);
  // int(mb * 1024 * 1024) truncates.
  EXPECT_EQ(ddp_bucket_bytes(1e-6, "--bucket-cap-mb"), 1u);
  EXPECT_THROW(ddp_bucket_bytes(0, "--bucket-cap-mb"), Error);
  EXPECT_THROW(ddp_bucket_bytes(1e-7, "--bucket-cap-mb"), Error);
  EXPECT_THROW(ddp_bucket_bytes(-1, "--bucket-cap-mb"), Error);
}

TEST(DdpBuckets, GradientsAreReadyInReverseParameterOrder) {
  EXPECT_EQ(gradient_ready_order(3), (std::vector<std::size_t>{2, 1, 0}));
}

}  // namespace
}  // namespace cb
