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

}  // namespace
}  // namespace cb
