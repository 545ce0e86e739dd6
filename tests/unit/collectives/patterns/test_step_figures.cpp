// A step's figures from its timeline.
#include <gtest/gtest.h>

#include "collectives/patterns/step_figures.hpp"

namespace cb {
namespace {

TEST(StepFigures, CommunicationIsTheTimeAnyCollectiveWasInFlight) {
  StepTimeline t;
  t.start_us = {0, 5, 30, 31};
  t.end_us = {10, 20, 40, 35};
  EXPECT_DOUBLE_EQ(communication_us(t), 30);  // [0, 20] and [30, 40]
}

TEST(StepFigures, ExposedIsStepMinusComputeAndOverlapIsWhatHid) {
  EXPECT_DOUBLE_EQ(exposed_us(150, 120), 30);
  EXPECT_DOUBLE_EQ(*overlap_efficiency(30, 60), 0.5);
  EXPECT_DOUBLE_EQ(*overlap_efficiency(60, 60), 0.0);
  EXPECT_FALSE(overlap_efficiency(0, 0).has_value());
}

TEST(StepFigures, NoComputeMeansNoOverlapToReport) {
  StepProgram p;
  StepOp op;
  op.collective = Collective::AllReduce;
  op.count = 10;
  op.bytes = 40;
  p.ops = {op};
  StepTimeline t;
  t.step_us = 30;      // host overhead around a 10 us collective, nothing to hide behind
  t.compute_us = 0.3;  // what a GPU's empty spin kernel measures: the program has no compute
  t.start_us = {10};
  t.end_us = {20};
  ReplayRecord r;
  summarize_steps(p, {t}, r);
  EXPECT_DOUBLE_EQ(r.exposed_us, 29.7);
  EXPECT_FALSE(r.overlap.has_value());
}

TEST(StepFigures, SummaryTakesMediansOverSteps) {
  StepProgram p;
  StepOp op;
  op.collective = Collective::AllReduce;
  op.count = 10;
  op.bytes = 40;
  op.label = "bucket 0";
  p.ops = {op};
  p.actions = {{StepAction::Kind::Compute, 100, 0}};
  std::vector<StepTimeline> steps;
  for (double k : {1.0, 3.0, 2.0}) {
    StepTimeline t;
    t.step_us = 100 * k;
    t.compute_us = 50 * k;
    t.start_us = {10 * k};
    t.end_us = {90 * k};
    steps.push_back(t);
  }
  ReplayRecord r;
  summarize_steps(p, steps, r);
  EXPECT_EQ(r.steps, 3);
  EXPECT_DOUBLE_EQ(r.step_us, 200);
  EXPECT_DOUBLE_EQ(r.step_min_us, 100);
  EXPECT_DOUBLE_EQ(r.step_max_us, 300);
  EXPECT_DOUBLE_EQ(r.compute_us, 100);
  EXPECT_DOUBLE_EQ(r.comm_us, 160);
  EXPECT_DOUBLE_EQ(r.exposed_us, 100);
  EXPECT_DOUBLE_EQ(*r.overlap, 1 - 100.0 / 160.0);
  ASSERT_EQ(r.ops.size(), 1u);
  EXPECT_EQ(r.ops[0].collective, "allreduce");
  EXPECT_DOUBLE_EQ(r.ops[0].start_us, 20);
  EXPECT_DOUBLE_EQ(r.ops[0].time_us, 160);
}

}  // namespace
}  // namespace cb
