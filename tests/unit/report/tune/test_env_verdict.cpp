// tune --env's decision on a combination against the current environment, over launches,
// against values worked out by hand; and the --emit-env file's quoting.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "report/tune/env_advice.hpp"
#include "report/tune/env_verdict.hpp"

namespace cb {
namespace {

// Three launches whose logs are log(level) + {0, 0.02, -0.02}: mean log(level), sd 0.02.
EnvLaunches three(double level, ControlFigures control = {1000, 100}) {
  return {{level, level * std::exp(0.02), level * std::exp(-0.02)}, {control, control, control}};
}

// Welch on the logs: se = sqrt(2 x 0.0004 / 3) = 0.0163299, df = 4, t(0.995; 4) = 4.604095,
// half width 0.0751846 in log; the interval of the ratio is ratio x exp(-+0.0751846).
constexpr double kHalf = 0.0751846;

TEST(EnvVerdict, TwiceAsFastBeyondTheNoiseIsAdvised) {
  EnvVerdict v = judge_env(three(100), three(50), 0.02, 1);
  EXPECT_EQ(v.outcome, EnvOutcome::Advised);
  EXPECT_NEAR(v.ratio.ratio, 0.5, 1e-9);
  EXPECT_NEAR(v.ratio.low, 0.5 * std::exp(-kHalf), 1e-6);  // 0.463786
  EXPECT_NEAR(v.ratio.high, 0.5 * std::exp(kHalf), 1e-6);  // 0.539042 < 1 / 1.02
  EXPECT_EQ(v.ratio.reference_launches, 3);
  EXPECT_EQ(v.ratio.candidate_launches, 3);
  EXPECT_DOUBLE_EQ(v.floor, 1.02);
}

TEST(EnvVerdict, ABoundBeyondAThousandfoldSaysItIsUnbounded) {
  EnvVerdict v;
  v.ratio.low = 0.5;
  v.ratio.high = 2;
  EXPECT_EQ(gain_bound_text(v), "0.50x-2.00x");
  v.ratio.low = 1.36e-5;  // 2 v 2 scattered launches: t(0.995; 1) = 63.66
  v.ratio.high = 7.9e4;
  EXPECT_EQ(gain_bound_text(v), "unbounded: beyond 0.001x-1000x");
  v.ratio.low = 0.5;  // one side alone beyond is enough
  EXPECT_EQ(gain_bound_text(v), "unbounded: beyond 0.001x-1000x");
}

TEST(EnvVerdict, OnePercentFasterWithinTheNoiseKeepsTheCurrentEnvironment) {
  // ratio 0.99: the interval 0.918297-1.067302 reaches past 1 / 1.02 = 0.980392.
  EnvVerdict v = judge_env(three(100), three(99), 0.02, 1);
  EXPECT_EQ(v.outcome, EnvOutcome::Keep);
  EXPECT_NEAR(v.ratio.ratio, 0.99, 1e-9);
  EXPECT_NEAR(v.ratio.low, 0.99 * std::exp(-kHalf), 1e-6);
  EXPECT_NEAR(v.ratio.high, 0.99 * std::exp(kHalf), 1e-6);
}

TEST(EnvVerdict, AGainBelowTheFloorIsNotAdvisedHoweverSteady) {
  // 1 % faster in every launch alike, no spread: the interval is 0.99 itself, inside the floor.
  EnvLaunches ref{{100, 100, 100}, {}}, cand{{99, 99, 99}, {}};
  EnvVerdict v = judge_env(ref, cand, 0.02, 1);
  EXPECT_EQ(v.outcome, EnvOutcome::Keep);
  EXPECT_NEAR(v.ratio.high, 0.99, 1e-9);
  // With no floor, the same steady gain is advised.
  EXPECT_EQ(judge_env(ref, cand, 0, 1).outcome, EnvOutcome::Advised);
}

TEST(EnvVerdict, MoreComparisonsWidenTheBound) {
  // 0.8x with family 1: 0.8 x exp(0.0751846) = 0.8624 < 0.9804, advised. With a family of 1000
  // the confidence per comparison is 1 - 0.01 / 1000 and t(1 - 5e-6; 4) = 35.6, half width
  // 0.58 in log: the bound reaches 1.43, kept.
  EXPECT_EQ(judge_env(three(100), three(80), 0.02, 1).outcome, EnvOutcome::Advised);
  EnvVerdict v = judge_env(three(100), three(80), 0.02, 1000);
  EXPECT_EQ(v.outcome, EnvOutcome::Keep);
  EXPECT_GT(v.ratio.high, 1.0);
}

TEST(EnvVerdict, ControlThatMovedBetweenLaunchesIsInconclusive) {
  // The candidate's launches ran with a core-to-core round trip 3x the reference's (beyond the
  // 1.5x tolerance): its twice-as-fast times may be the machine's, not the environment's.
  EnvVerdict v = judge_env(three(100, {1000, 100}), three(50, {3000, 100}), 0.02, 1);
  EXPECT_EQ(v.outcome, EnvOutcome::Inconclusive);
  EXPECT_NE(v.why.find("control measurement moved"), std::string::npos) << v.why;
  // Without control figures the gate cannot apply, and the gain is judged.
  EnvLaunches ref = three(100), cand = three(50);
  ref.control.clear();
  cand.control.clear();
  EXPECT_EQ(judge_env(ref, cand, 0.02, 1).outcome, EnvOutcome::Advised);
}

TEST(EnvVerdict, ControlGateKeepsTheAgreeingLaunches) {
  // One candidate launch in a slow mode (round trip 3000 ns, time 500) is left out by the gate;
  // the other two agree with the reference and are judged: 2 v 3 launches.
  EnvLaunches ref = three(100);
  EnvLaunches cand{{50, 50 * std::exp(0.02), 500}, {{1000, 100}, {1000, 100}, {3000, 100}}};
  EnvVerdict v = judge_env(ref, cand, 0.02, 1);
  EXPECT_EQ(v.ratio.candidate_launches, 2);
  EXPECT_EQ(v.ratio.reference_launches, 3);
  EXPECT_EQ(v.outcome, EnvOutcome::Advised);
}

TEST(EnvVerdict, AGateThatLeftLaunchesOutAndDecidesNothingIsInconclusiveNotKeep) {
  // One candidate launch in a slow mode is left out; the two kept, 99 and 99 x e^0.02 against
  // three(100), give a ratio of 0.9999 with a bound far wider than the floor on both sides (2 v
  // 3 launches): a gain beyond 1.02x is not ruled out, so not "keep".
  EnvLaunches ref = three(100);
  EnvLaunches cand{{99, 99 * std::exp(0.02), 500}, {{1000, 100}, {1000, 100}, {3000, 100}}};
  EnvVerdict v = judge_env(ref, cand, 0.02, 1);
  EXPECT_EQ(v.outcome, EnvOutcome::Inconclusive);
  EXPECT_EQ(v.ratio.candidate_launches, 2);
  EXPECT_LT(v.ratio.low, 1 / 1.02);
  EXPECT_NE(v.why.find("2 of 3 launches and 3 of 3 of the current environment agreed"),
            std::string::npos)
      << v.why;
  // The verdict line gives the figures of the launches the gate kept.
  EnvChoice c;
  c.candidate = "NCCL_X=1";
  c.cases = 1;
  c.verdict = v;
  const std::string line = env_verdict_line(c);
  EXPECT_EQ(line.rfind("INCONCLUSIVE", 0), 0u) << line;
  EXPECT_NE(line.find("too few to decide: "), std::string::npos) << line;
  EXPECT_NE(line.find("over 2 v 3 launches, floor 1.02x)"), std::string::npos) << line;
  // The same launches with every control alike are judged on all three: kept.
  cand.control = {{1000, 100}, {1000, 100}, {1000, 100}};
  cand.times = {99, 99 * std::exp(0.02), 99 * std::exp(-0.02)};
  EXPECT_EQ(judge_env(ref, cand, 0.02, 1).outcome, EnvOutcome::Keep);
  // When the kept launches rule a gain out (twice as slow), the verdict is "keep" all the same.
  EnvLaunches slow{{200, 200 * std::exp(0.02), 500}, {{1000, 100}, {1000, 100}, {3000, 100}}};
  EXPECT_EQ(judge_env(ref, slow, 0.02, 1).outcome, EnvOutcome::Keep);
}

TEST(EnvVerdict, OneLaunchASideIsInconclusive) {
  EnvVerdict v = judge_env({{100}, {}}, {{50}, {}}, 0.02, 1);
  EXPECT_EQ(v.outcome, EnvOutcome::Inconclusive);
  EXPECT_FALSE(v.why.empty());
}

TEST(EmitEnv, ValuesAreQuotedForTheShell) {
  EnvChoice c;
  c.label = "NCCL_X=$(touch /tmp/x)";
  c.line = "ADVISE ...";
  const std::string text =
      emit_env_text(c, {{"NCCL_X", "$(touch /tmp/x)"}, {"NCCL_Y", "it's"}, {"NCCL_Z", "8"}});
  EXPECT_NE(text.find("\nNCCL_X='$(touch /tmp/x)'\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nNCCL_Y='it'\\''s'\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nNCCL_Z=8\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# ADVISE ..."), std::string::npos) << text;
}

TEST(EmitEnv, NothingIsWrittenWithoutAnAdvisedCombination) {
  EnvChoice c;
  c.candidate = "NCCL_X=1";
  c.line = "KEEP the current environment: ...";
  const std::string text = emit_env_text(c, {{"NCCL_X", "1"}});
  EXPECT_EQ(text.find("NCCL_X=1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("keep it"), std::string::npos) << text;
}

TEST(EmitEnv, ACutSweepSaysSoFirstAndSetsNothing) {
  EnvChoice c;
  c.label = "NCCL_X=1";
  c.line = "ADVISE NCCL_X=1 ...";
  const std::string text =
      emit_env_text(c, {{"NCCL_X", "1"}}, "interrupted by signal 2 (Interrupt)", {"NCCL_X=2"});
  EXPECT_EQ(text.rfind("# INCOMPLETE: the sweep was interrupted by signal 2 (Interrupt); not "
                       "measured in full: NCCL_X=2\n",
                       0),
            0u)
      << text;
  EXPECT_EQ(text.find("\nNCCL_X=1\n"), std::string::npos) << text;
}

// A label with a newline (a --resume file's records carry labels as written) stays a comment:
// every line of the file is a comment or NAME=VALUE.
TEST(EmitEnv, CommentsCannotBeEndedByTheirText) {
  EnvChoice c;
  c.line = "KEEP NCCL_X=ok\ntouch pwn #, its best ...";
  const std::string keep = emit_env_text(c, {{"NCCL_X", "ok"}});
  const std::string cut = emit_env_text(c, {{"NCCL_X", "ok"}}, "ended\rby\x1b[2J", {"NCCL_X=a\nb"});
  for (const std::string& text : {keep, cut}) {
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) EXPECT_EQ(line.rfind("# ", 0), 0u) << text;
    EXPECT_EQ(text.find('\r'), std::string::npos) << text;
    EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  }
  EXPECT_NE(keep.find("# KEEP NCCL_X=ok\\ntouch pwn #"), std::string::npos) << keep;
}

}  // namespace
}  // namespace cb
