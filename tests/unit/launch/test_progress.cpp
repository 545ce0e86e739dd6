// The progress display's figures: durations, the bar and plain lines, the time left from the
// plan's budgets and the observed pace, the events rank 0 sends, and the case budgets.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "collectives/engine/case_budget.hpp"
#include "common/progress_display.hpp"
#include "launch/progress_relay.hpp"

namespace cb {
namespace {

using Clock = ProgressTracker::Clock;

Clock::time_point at(Clock::time_point t0, double seconds) {
  return t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

TEST(ProgressFormat, Durations) {
  EXPECT_EQ(format_duration(0), "0s");
  EXPECT_EQ(format_duration(-3), "0s");
  EXPECT_EQ(format_duration(42.4), "42s");
  EXPECT_EQ(format_duration(187), "3m07s");
  EXPECT_EQ(format_duration(7500), "2h05m");
}

TEST(ProgressFormat, BarShowsDoneTotalElapsedEtaAndCurrent) {
  ProgressState s;
  s.done = 24;
  s.total = 48;
  s.current = "gloo allreduce 64 MiB float sum";
  s.elapsed_s = 62;
  s.left_s = 70;
  EXPECT_EQ(progress_bar_line(s, 200),
            "[==========>         ] 24/48 cases  1m02s elapsed  ETA 1m10s  gloo allreduce 64 MiB "
            "float sum");
  s.done = 48;
  EXPECT_EQ(progress_bar_line(s, 200).substr(0, 22), "[====================]");
  s.done = 0;
  EXPECT_EQ(progress_bar_line(s, 200).substr(0, 22), "[>                   ]");
}

TEST(ProgressFormat, BarNeverWrapsTheTerminal) {
  ProgressState s;
  s.done = 1;
  s.total = 2;
  s.current = std::string(300, 'x');
  EXPECT_EQ(progress_bar_line(s, 80).size(), 79u);
}

TEST(ProgressFormat, UnknownTimeLeftIsAQuestionMark) {
  ProgressState s;
  s.done = 1;
  s.total = 3;
  s.unit = "repetitions";
  EXPECT_NE(progress_bar_line(s, 200).find("1/3 repetitions  0s elapsed  ETA ?"),
            std::string::npos);
}

TEST(ProgressFormat, PlainLines) {
  ProgressState s;
  s.done = 23;
  s.total = 48;
  s.current = "mpi barrier";
  s.elapsed_s = 42;
  s.left_s = 70;
  EXPECT_EQ(progress_plain_line(s, false),
            "commbench: progress: 23/48 cases done, 42s elapsed, ETA 1m10s; now mpi barrier");
  s.done = 48;
  s.elapsed_s = 62;
  EXPECT_EQ(progress_plain_line(s, true), "commbench: progress: 48/48 cases done, 1m02s elapsed");
}

TEST(ProgressEstimate, PlanBudgetsBeforeAnyPaceIsKnown) {
  // 10 s planned, nothing done: the plan as it is.
  EXPECT_DOUBLE_EQ(*estimate_left(10, 0, 1, 0, 0, 0, 1), 10);
  EXPECT_FALSE(estimate_left(0, 0, 0, 0, 0, 0, 1));
  EXPECT_FALSE(estimate_left(10, 0, 1, 0, 0, 0, 0));  // weights only, no pace yet
}

TEST(ProgressEstimate, ScaledByTheObservedPace) {
  // 4 of 10 planned seconds took 8 s (pace 2 with prior 0): 5 s after the current case, at
  // pace 2, plus the current case's 2 s less the 0.5 s it has run.
  EXPECT_DOUBLE_EQ(*estimate_left(10, 4, 1, 4, 8, 0.5, 0), 10 + 1.5);
  // The prior pulls an early pace towards the plan: (8 + 1) / (4 + 1) = 1.8.
  EXPECT_DOUBLE_EQ(*estimate_left(10, 4, 1, 4, 8, 0, 1), 5 * 1.8 + 1.8);
  // A case that overruns its budget leaves the rest of the plan.
  EXPECT_DOUBLE_EQ(*estimate_left(10, 4, 1, 4, 4, 30, 0), 5);
  EXPECT_DOUBLE_EQ(budget_prior(3), 0.3);
  EXPECT_DOUBLE_EQ(budget_prior(300), 1);
}

TEST(ProgressTracker, FollowsCasesToTheEnd) {
  const auto t0 = Clock::now();
  ProgressTracker t("cases", true, t0);
  EXPECT_FALSE(t.active());
  t.started(1, 4, "a", 0, 1, 4, at(t0, 2));  // start-up took 2 s
  ProgressState s = t.state(at(t0, 2));
  EXPECT_EQ(s.done, 0u);
  EXPECT_EQ(s.total, 4u);
  EXPECT_EQ(s.current, "a");
  EXPECT_DOUBLE_EQ(s.elapsed_s, 2);
  EXPECT_DOUBLE_EQ(*s.left_s, 4);            // pace 1: the plan
  t.started(2, 4, "b", 1, 1, 4, at(t0, 5));  // case a took 3 s for 1 s planned
  s = t.state(at(t0, 5));
  EXPECT_EQ(s.done, 1u);
  EXPECT_EQ(s.current, "b");
  // pace (3 + 0.4) / (1 + 0.4); three cases left at that pace.
  EXPECT_NEAR(*s.left_s, 3 * 3.4 / 1.4, 1e-9);
  // A second later, the running case has used a second of its share.
  EXPECT_NEAR(*t.state(at(t0, 6)).left_s, 3 * 3.4 / 1.4 - 1, 1e-9);
  t.finished(at(t0, 9));
  s = t.state(at(t0, 20));
  EXPECT_TRUE(t.done());
  EXPECT_EQ(s.done, 4u);
  EXPECT_TRUE(s.current.empty());
  EXPECT_DOUBLE_EQ(s.elapsed_s, 9);
  EXPECT_DOUBLE_EQ(*s.left_s, 0);
}

TEST(ProgressTracker, ResumedUnitsDoNotCountTowardsThePace) {
  // Weights only: units 1-3 were done before (resumed); unit 4 took 10 s.
  const auto t0 = Clock::now();
  ProgressTracker t("combinations", false, t0);
  t.started(4, 6, "d", 3, 1, 6, t0);
  EXPECT_FALSE(t.state(t0).left_s);
  t.started(5, 6, "e", 4, 1, 6, at(t0, 10));
  EXPECT_DOUBLE_EQ(*t.state(at(t0, 10)).left_s, 20);
}

TEST(ProgressDisplay, StyleFollowsTheModeAndTheTerminal) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  EXPECT_EQ(ProgressDisplay::style_for("never", p[1]), ProgressDisplay::Style::Off);
  EXPECT_EQ(ProgressDisplay::style_for("auto", p[1]), ProgressDisplay::Style::Off);
  EXPECT_EQ(ProgressDisplay::style_for("always", p[1]), ProgressDisplay::Style::Lines);
  ::close(p[0]);
  ::close(p[1]);
}

TEST(ProgressDisplay, PlainLinesAtALowRateAndAFinalLine) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  {
    ProgressDisplay d(ProgressDisplay::Style::Lines, p[1], 3600);
    ProgressState s;
    s.total = 3;
    s.current = "x";
    d.show(s);
    s.done = 1;
    d.show(s);  // within the interval: not printed
    d.print("commbench: note: y\n");
    s.done = 3;
    d.finish(s);
  }
  ::close(p[1]);
  char buf[4096];
  ssize_t n = ::read(p[0], buf, sizeof(buf));
  ::close(p[0]);
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(buf, static_cast<std::size_t>(n)),
            "commbench: progress: 0/3 cases done, 0s elapsed, ETA ?; now x\n"
            "commbench: note: y\n"
            "commbench: progress: 3/3 cases done, 0s elapsed\n");
}

TEST(ProgressDisplay, BarIsErasedForOtherOutputAndDrawnAgain) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  {
    ProgressDisplay d(ProgressDisplay::Style::Bar, p[1]);
    ProgressState s;
    s.total = 2;
    d.show(s);
    d.print("commbench: note: y\n");
  }  // erased at the end
  ::close(p[1]);
  char buf[4096];
  ssize_t n = ::read(p[0], buf, sizeof(buf));
  ::close(p[0]);
  const std::string bar = "[>                   ] 0/2 cases  0s elapsed  ETA ?";
  EXPECT_EQ(std::string(buf, static_cast<std::size_t>(n)),
            "\r" + bar + "\x1b[K\r\x1b[Kcommbench: note: y\n\r" + bar + "\x1b[K\r\x1b[K");
}

TEST(ProgressDisplay, OutputForAnotherDescriptorGoesAboveTheBar) {
  int err[2], out[2];
  ASSERT_EQ(::pipe(err), 0);
  ASSERT_EQ(::pipe(out), 0);
  {
    ProgressDisplay d(ProgressDisplay::Style::Bar, err[1]);
    ProgressState s;
    s.total = 2;
    d.show(s);
    d.print_to(out[1], "row\n", "standard output");
  }
  ::close(err[1]);
  ::close(out[1]);
  char buf[4096];
  ssize_t n = ::read(err[0], buf, sizeof(buf));
  const std::string bar = "\r[>                   ] 0/2 cases  0s elapsed  ETA ?\x1b[K";
  EXPECT_EQ(std::string(buf, static_cast<std::size_t>(n)), bar + "\r\x1b[K" + bar + "\r\x1b[K");
  n = ::read(out[0], buf, sizeof(buf));
  EXPECT_EQ(std::string(buf, static_cast<std::size_t>(n)), "row\n");
  ::close(err[0]);
  ::close(out[0]);
}

TEST(ProgressEvents, RoundTrip) {
  ProgressEvent e;
  e.index = 3;
  e.total = 48;
  e.planned_done = 0.125;
  e.planned_current = 0.0625;
  e.planned_total = 2.5;
  e.label = "gloo allreduce\t64 MiB";
  auto d = decode_progress_event(encode_progress_event(e));
  ASSERT_TRUE(d);
  EXPECT_FALSE(d->finished);
  EXPECT_EQ(d->index, 3u);
  EXPECT_EQ(d->total, 48u);
  EXPECT_DOUBLE_EQ(d->planned_done, 0.125);
  EXPECT_DOUBLE_EQ(d->planned_current, 0.0625);
  EXPECT_DOUBLE_EQ(d->planned_total, 2.5);
  EXPECT_EQ(d->label, "gloo allreduce 64 MiB");
  ProgressEvent end;
  end.finished = true;
  end.total = 48;
  d = decode_progress_event(encode_progress_event(end));
  ASSERT_TRUE(d);
  EXPECT_TRUE(d->finished);
  EXPECT_EQ(d->total, 48u);
  EXPECT_FALSE(decode_progress_event("case\t0\t4\t0\t0\t0\tx"));
  EXPECT_FALSE(decode_progress_event("case\t5\t4\t0\t0\t0\tx"));
  EXPECT_FALSE(decode_progress_event("case\tx\t4\t0\t0\t0\tx"));
  EXPECT_FALSE(decode_progress_event("hello"));
}

TEST(CaseBudget, AdaptiveAndFixedIterations) {
  Case small{Collective::AllReduce, "default", DType::Float, ReduceOp::Sum, -1, 2, 8,
             Placement::Out};
  Case big = small;
  big.bytes = 1ULL << 30;
  RunnerOptions o;
  o.budget_s = 0.05;
  // A small case: a fifth of the budget warming up, the budget timing, one validation.
  EXPECT_NEAR(planned_case_seconds(small, o), 0.06, 1e-4);
  // 1 GiB: at least the minimum iterations, each ~1.07 s.
  EXPECT_GT(planned_case_seconds(big, o), 5.0);
  o.iters = 100;
  o.warmup = 10;
  o.check = false;
  EXPECT_NEAR(planned_case_seconds(small, o), 110 * (10e-6 + 8e-9), 1e-9);
  std::vector<std::vector<Case>> plans = {{small, big}, {small}};
  EXPECT_EQ(planned_seconds(plans, o).size(), 3u);
}

}  // namespace
}  // namespace cb
