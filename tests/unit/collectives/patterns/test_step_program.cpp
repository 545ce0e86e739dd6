// Step programs: where compute goes, when each collective is issued and waited for.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "collectives/patterns/step_program.hpp"

namespace cb {
namespace {

using K = StepAction::Kind;

std::string trace(const StepProgram& p) {
  std::string s;
  for (const auto& a : p.actions) {
    if (!s.empty()) s += " ";
    if (a.kind == K::Compute) s += fmt::format("c{}", static_cast<int>(a.us));
    if (a.kind == K::Issue) s += fmt::format("i{}", a.op);
    if (a.kind == K::Wait) s += fmt::format("w{}", a.op);
  }
  return s;
}

Model model(std::initializer_list<std::pair<std::uint64_t, DType>> list) {
  Model m;
  for (const auto& [n, t] : list)
    m.params.push_back({fmt::format("p{}", m.params.size()), t, n, {}, ""});
  return m;
}

constexpr std::uint64_t MiB = 1024 * 1024;

TEST(DdpProgram, EachBucketIsIssuedOnceItsLastGradientIsReady) {
  // Buckets {4, 3} and {2, 1, 0}: parameter 4 and 3 computed, bucket 0 issued, then 2, 1, 0.
  const Model m = model({{100, DType::Float},
                         {300000, DType::Float},
                         {10, DType::Float},
                         {200000, DType::Float},
                         {70000, DType::Float}});
  const auto p = ddp_program(m, ddp_buckets(m.params, MiB, 25 * MiB), {1, 2, 3, 4, 5});
  EXPECT_EQ(trace(p), "c9 i0 c6 i1");
  EXPECT_DOUBLE_EQ(p.compute_us(), 15);
  ASSERT_EQ(p.ops.size(), 2u);
  EXPECT_EQ(p.ops[0].collective, Collective::AllReduce);
  EXPECT_EQ(p.ops[0].placement, Placement::In);
  EXPECT_EQ(p.ops[0].count, 270000u);
  EXPECT_EQ(p.ops[0].bytes, 1080000u);
  EXPECT_EQ(p.ops[0].tensors, 2u);
  EXPECT_EQ(p.buffers, (std::vector<std::uint64_t>{1080000, 1200440}));
}

TEST(DdpProgram, ABucketWaitsForTheBucketsBeforeIt) {
  // Buckets {2, 0} (f32), {3, 1} (f16), {4} (f64): bucket 2's only gradient is ready first, but
  // DDP issues buckets in order, so it goes after bucket 1, at the end.
  const Model m = model({{300000, DType::Float},
                         {300000, DType::Half},
                         {100, DType::Float},
                         {100, DType::Half},
                         {10, DType::Double}});
  const auto p = ddp_program(m, ddp_buckets(m.params, MiB, 25 * MiB), {10, 10, 10, 10, 10});
  EXPECT_EQ(trace(p), "c50 i0 i1 i2");
}

TEST(DdpProgram, NoComputeIssuesEveryBucketAtOnce) {
  const Model m = model({{400000, DType::Float}, {400000, DType::Float}});
  const auto p = ddp_program(m, ddp_buckets(m.params, MiB, 25 * MiB), {0, 0});
  EXPECT_EQ(trace(p), "i0 i1");
}

TEST(FsdpProgram, GathersPrefetchOneUnitAheadAndReduceScattersFollowEachBackward) {
  Model m;
  m.params = {{"a", DType::Float, 8, {}, "u0"},
              {"b", DType::Float, 6, {}, "u1"},
              {"c", DType::Float, 5, {}, "u2"}};
  const auto p = fsdp_program(m, fsdp_units(m.params, 2), {20, 40, 60}, 0.5);
  // ops in issue order: ag0 f, ag1 f, ag2 f, ag2 b, ag1 b, rs2, ag0 b, rs1, rs0
  EXPECT_EQ(trace(p), "i0 i1 w0 c10 i2 w1 c20 w2 c30 i3 i4 w3 c60 i5 i6 w4 c40 i7 w6 c20 i8");
  ASSERT_EQ(p.ops.size(), 9u);
  EXPECT_EQ(p.ops[0].collective, Collective::AllGather);
  EXPECT_EQ(p.ops[0].phase, "forward");
  EXPECT_EQ(p.ops[5].collective, Collective::ReduceScatter);
  EXPECT_EQ(p.ops[5].label, "unit u2");
  // Unit u2: 5 elements over 2 ranks -> shards of 3, a padded full tensor of 6.
  EXPECT_EQ(p.ops[2].count, 3u);
  EXPECT_EQ(p.ops[2].bytes, 24u);
  EXPECT_EQ(p.ops[2].params, 5u);
  // Gathers read the shard and write the full tensor; the reduce_scatter the other way round.
  EXPECT_EQ(p.ops[2].send, 5);
  EXPECT_EQ(p.ops[2].recv, 4);
  EXPECT_EQ(p.ops[5].send, 4);
  EXPECT_EQ(p.ops[5].recv, 5);
  EXPECT_EQ(p.buffers, (std::vector<std::uint64_t>{32, 16, 24, 12, 24, 12}));
  EXPECT_DOUBLE_EQ(p.compute_us(), 180);
}

}  // namespace
}  // namespace cb
