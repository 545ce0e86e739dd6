#include <gtest/gtest.h>

#include "collectives/engine/plan.hpp"
#include "common/error.hpp"

namespace cb {
namespace {

// A test double: a backend that offers everything except what a test removes. It never
// communicates; only planning is exercised.
class FakePlanningBackend : public Backend {
 public:
  std::string name() const override { return "fake"; }
  std::string library() const override { return "fake 1"; }
  int rank() const override { return 0; }
  int size() const override { return 4; }
  bool supports(Collective c) const override { return c != Collective::Gather; }
  bool supports(DType t) const override { return t != DType::Half; }
  bool supports(Collective c, ReduceOp op) const override {
    return info(c).reduces ? op != ReduceOp::Avg : op == ReduceOp::None;
  }
  std::string unsupported(DType t, ReduceOp op) const override {
    return t == DType::Double && op == ReduceOp::Max ? "no double max" : "";
  }
  std::vector<std::string> algorithms(Collective c) const override {
    if (c == Collective::AllReduce) return {"ring", "tree"};
    return {};
  }
  Memory& memory() override { std::abort(); }
  Opened open(Collective, const std::string&) override { return {}; }
};

TEST(Sizes, MultiplicativeAndAdditiveSweeps) {
  SweepOptions o;
  o.min_bytes = 8;
  o.max_bytes = 64;
  EXPECT_EQ(sweep_sizes(o), (std::vector<std::uint64_t>{8, 16, 32, 64}));
  o.step_factor = 4;
  EXPECT_EQ(sweep_sizes(o), (std::vector<std::uint64_t>{8, 32}));
  o.step_bytes = 20;
  EXPECT_EQ(sweep_sizes(o), (std::vector<std::uint64_t>{8, 28, 48}));
  o.min_bytes = 100;
  EXPECT_THROW(sweep_sizes(o), Error);
}

TEST(Plan, SkipsWhatTheBackendLacksAndSaysSo) {
  FakePlanningBackend b;
  SweepOptions o;
  o.collectives = {Collective::AllReduce, Collective::Gather, Collective::Broadcast};
  o.dtypes = {DType::Float, DType::Half};
  o.ops = {ReduceOp::Sum, ReduceOp::Avg};
  o.min_bytes = o.max_bytes = 1024;
  std::vector<std::string> notes;
  auto cases = plan_cases(b, o, 4, notes);
  // allreduce float sum + broadcast float (op none) = 2 cases.
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].collective, Collective::AllReduce);
  EXPECT_EQ(cases[0].count, 256u);
  EXPECT_EQ(cases[1].op, ReduceOp::None);
  EXPECT_EQ(cases[1].root, 0);
  EXPECT_EQ(cases[0].root, -1);
  EXPECT_EQ(notes.size(), 3u);  // gather, half, avg
}

TEST(Plan, SkipsAnOpTheBackendCannotApplyToOneDtypeAndSaysWhy) {
  FakePlanningBackend b;
  SweepOptions o;
  o.collectives = {Collective::AllReduce};
  o.dtypes = {DType::Float, DType::Double};
  o.ops = {ReduceOp::Sum, ReduceOp::Max};
  o.min_bytes = o.max_bytes = 1024;
  std::vector<std::string> notes;
  auto cases = plan_cases(b, o, 4, notes);
  // float sum, float max, double sum: double max alone is skipped.
  ASSERT_EQ(cases.size(), 3u);
  for (const auto& c : cases) EXPECT_FALSE(c.dtype == DType::Double && c.op == ReduceOp::Max);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "fake: op max on double is not supported (no double max), skipped");
}

TEST(Plan, AllRootsAndAllAlgorithms) {
  FakePlanningBackend b;
  SweepOptions o;
  o.collectives = {Collective::AllReduce, Collective::Reduce};
  o.all_roots = true;
  o.algorithms = {"all"};
  o.min_bytes = o.max_bytes = 64;
  o.placements = {Placement::Out, Placement::In};
  std::vector<std::string> notes;
  auto cases = plan_cases(b, o, 4, notes);
  // allreduce: 3 algorithms x 2 placements; reduce: 4 roots x 2 placements.
  EXPECT_EQ(cases.size(), 6u + 8u);
  EXPECT_EQ(cases[2].algorithm, "ring");
}

TEST(Plan, RootOutOfRangeIsUsageError) {
  FakePlanningBackend b;
  SweepOptions o;
  o.collectives = {Collective::Broadcast};
  o.root = 4;
  std::vector<std::string> notes;
  EXPECT_THROW(plan_cases(b, o, 4, notes), Error);
}

TEST(Plan, TooSmallSizesAreDroppedAndBarrierHasOneCase) {
  FakePlanningBackend b;
  SweepOptions o;
  o.collectives = {Collective::AllToAll, Collective::Barrier};
  o.min_bytes = 8;
  o.max_bytes = 32;
  std::vector<std::string> notes;
  auto cases = plan_cases(b, o, 4, notes);
  // alltoall float over 4 ranks needs 16 bytes per element block: 16 and 32 remain.
  ASSERT_EQ(cases.size(), 3u);
  EXPECT_EQ(cases[0].bytes, 16u);
  EXPECT_EQ(cases[2].collective, Collective::Barrier);
}

TEST(Plan, BufferNeedsCoverTheLargestCase) {
  std::vector<Case> cases = {
      {Collective::ReduceScatter, "default", DType::Float, ReduceOp::Sum, -1, 100, 1600,
       Placement::Out},
      {Collective::AllGather, "default", DType::Double, ReduceOp::None, -1, 10, 320, Placement::In},
  };
  BufferNeeds n = buffer_needs(cases, 4);
  EXPECT_EQ(n.send, 1600u);
  EXPECT_EQ(n.recv, 400u);
}

SweepOptions alltoallv_sweep(std::vector<const char*> splits) {
  SweepOptions o;
  o.collectives = {Collective::AllToAllV};
  o.split.splits.clear();
  for (const char* s : splits) {
    SplitSpec spec = parse_split(s);
    spec.moe_hidden = 4;
    o.split.splits.push_back(spec);
  }
  o.min_bytes = 1024;
  o.max_bytes = 4096;
  return o;
}

TEST(PlanAlltoallv, OneSeriesPerSplitWithTheMeanARankSendsAsItsSize) {
  FakePlanningBackend b;
  SweepOptions o = alltoallv_sweep({"uniform", "zipf:1", "moe:8,2"});
  o.placements = {Placement::Out, Placement::In};
  std::vector<std::string> notes;
  auto cases = plan_cases(b, o, 4, notes);
  ASSERT_EQ(cases.size(), 3u * 3 * 2);  // 3 splits x 1, 2, 4 KiB x out, in
  const Case& u = cases[0];
  ASSERT_TRUE(u.split);
  EXPECT_EQ(split_name(*u.split), "uniform");
  EXPECT_EQ(u.bytes, 1024u);  // 4 x 64 floats: alltoall's blocks
  EXPECT_EQ(u.count, 256u);
  EXPECT_EQ(u.traffic.max_send, 256u);
  EXPECT_FALSE(has_twin(u));
  const Case& z = cases[6];
  EXPECT_EQ(split_name(*z.split), "zipf:1");
  EXPECT_EQ(z.bytes, 1024u);
  EXPECT_GT(z.traffic.incast, 1.0);
  EXPECT_GT(z.traffic.max_recv, z.traffic.max_send);
  EXPECT_TRUE(has_twin(z));
  const Case twin = uniform_twin(z, 4);
  EXPECT_TRUE(twin.uniform_twin);
  EXPECT_FALSE(has_twin(twin));
  EXPECT_EQ(twin.traffic.total, z.traffic.total);
  EXPECT_DOUBLE_EQ(twin.traffic.incast, 1.0);
  EXPECT_EQ(twin.bytes, z.bytes);
  // The moe cases send whole tokens of 4 floats, one copy per expert: 1 KiB is 32 tokens.
  const Case& m = cases[12];
  EXPECT_EQ(split_name(*m.split), "moe:8,2");
  EXPECT_EQ(m.traffic.total, 4u * 32 * 2 * 4);
  EXPECT_TRUE(m.traffic.drop_share);
  // Buffers hold the busiest rank's blocks, out of place and in place.
  BufferNeeds need = buffer_needs(cases, 4);
  std::uint64_t send = 0, recv = 0;
  for (const auto& c : cases) {
    send = std::max(send, c.traffic.max_send * 4);
    recv = std::max(recv, c.traffic.max_recv * 4);
  }
  EXPECT_EQ(need.send, send);
  EXPECT_EQ(need.recv, recv);
}

TEST(PlanAlltoallv, AMatrixRunsOnceAtItsOwnSizesAndSaysTheSweepDoesNotApply) {
  FakePlanningBackend b;
  SweepOptions o = alltoallv_sweep({"matrix:m.txt"});
  parse_matrix_text("0 16 32 48\n16 0 16 16\n0 0 0 0\n64 64 64 64\n", "m.txt", o.split.splits[0]);
  std::vector<std::string> notes;
  auto cases = plan_cases(b, o, 4, notes);
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0].traffic.total, (96u + 48 + 256) / 4);
  EXPECT_EQ(cases[0].bytes, 100u);  // 400 bytes over 4 ranks
  EXPECT_DOUBLE_EQ(cases[0].traffic.send_skew, 256.0 / 100);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0],
            "fake: alltoallv matrix:m.txt: the file sets every pair's bytes; the size sweep does "
            "not apply");
}

TEST(PlanAlltoallv, ASplitThatCannotTakeTheRankCountIsAUsageError) {
  FakePlanningBackend b;
  std::vector<std::string> notes;
  try {
    plan_cases(b, alltoallv_sweep({"moe:6,2"}), 4, notes);
    FAIL() << "planned moe:6,2 on 4 ranks";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_STREQ(e.what(), "--split moe:6,2: 6 experts do not spread evenly over 4 ranks");
  }
  SweepOptions big = alltoallv_sweep({"moe:64,1"});
  big.min_bytes = big.max_bytes = 1ULL << 32;
  EXPECT_THROW(plan_cases(b, big, 4, notes), Error);  // the router's cost is bounded
}

TEST(PlanAlltoallv, SizesThatMoveNothingOrNothingNewAreLeftOut) {
  FakePlanningBackend b;
  SweepOptions o = alltoallv_sweep({"uniform", "distance"});
  o.min_bytes = 8;
  o.max_bytes = 128;
  std::vector<std::string> notes;
  auto cases = plan_cases(b, o, 4, notes);
  // uniform: 4 floats per peer from 64 bytes; distance: nccl-tests' 16-byte blocks from 64.
  std::vector<std::uint64_t> bytes;
  for (const auto& c : cases) bytes.push_back(c.bytes);
  EXPECT_EQ(bytes, (std::vector<std::uint64_t>{16, 32, 64, 128, 48, 112}));
}

}  // namespace
}  // namespace cb
