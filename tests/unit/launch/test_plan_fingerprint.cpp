// The plan fingerprint env:// ranks send to rank 0: its text survives the wire whatever the
// values hold, equal plans give equal digests, and the first option that differs is named with
// both values.
#include "launch/plan_fingerprint.hpp"

#include <gtest/gtest.h>

namespace cb {
namespace {

PlanFingerprint plan(std::initializer_list<PlanOption> options) {
  PlanFingerprint f;
  for (const auto& o : options) f.add(o.name, o.value);
  return f;
}

TEST(PlanFingerprint, ItsTextReadsBackWhateverTheValuesHold) {
  const PlanFingerprint f = plan({{"subcommand", "run"},
                                  {"--nccl-x", "a\nb\\n c=d"},
                                  {"--empty", ""},
                                  {"--crlf", "x\r\ny\\"}});
  const auto back = PlanFingerprint::decode(f.encode());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->options, f.options);
  EXPECT_EQ(f.encode().find("a\nb"), std::string::npos) << "one option a line";
  EXPECT_TRUE(PlanFingerprint::decode("")) << "no options";
  EXPECT_FALSE(PlanFingerprint::decode("no equals sign"));
  EXPECT_FALSE(PlanFingerprint::decode("--x=bad escape \\q"));
  EXPECT_FALSE(PlanFingerprint::decode("=no name"));
}

TEST(PlanFingerprint, EqualPlansHaveEqualDigestsAndAnyChangeChangesIt) {
  const auto a = plan({{"subcommand", "run"}, {"--collectives", "allreduce"}});
  EXPECT_EQ(a.digest(), plan({{"subcommand", "run"}, {"--collectives", "allreduce"}}).digest());
  EXPECT_EQ(a.digest().size(), 16u);
  EXPECT_NE(a.digest(), plan({{"subcommand", "run"}, {"--collectives", "broadcast"}}).digest());
  // Where one value ends and the next begins is part of it.
  EXPECT_NE(plan({{"a", "b\nc=d"}}).digest(), plan({{"a", "b"}, {"c", "d"}}).digest());
}

TEST(PlanFingerprint, TheFirstDifferingOptionIsNamedWithBothValues) {
  const auto ours = plan({{"subcommand", "run"}, {"--collectives", "allreduce"}, {"-e", "1 KiB"}});
  const auto theirs =
      plan({{"subcommand", "run"}, {"--collectives", "broadcast"}, {"-e", "1 MiB"}});
  auto d = first_difference(theirs, ours);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->option, "--collectives");
  EXPECT_EQ(d->theirs, "broadcast");
  EXPECT_EQ(d->ours, "allreduce");
  EXPECT_FALSE(first_difference(ours, ours));
}

TEST(PlanFingerprint, AnOptionOnlyOneBuildHasIsNamed) {
  const auto ours = plan({{"subcommand", "run"}, {"--new", "1"}});
  const auto theirs = plan({{"subcommand", "run"}});
  auto d = first_difference(theirs, ours);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->option, "--new");
  EXPECT_EQ(d->theirs, "(none)");
  EXPECT_EQ(d->ours, "1");
  d = first_difference(ours, theirs);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->option, "--new");
  EXPECT_EQ(d->theirs, "1");
  EXPECT_EQ(d->ours, "(none)");
}

TEST(PlanFingerprint, AShownValueIsOneShortLine) {
  EXPECT_EQ(shown_value("allreduce"), "allreduce");
  EXPECT_EQ(shown_value(""), "''");
  EXPECT_EQ(shown_value("a\nb\x1b[31m"), "a?b?[31m");
  const std::string shown = shown_value(std::string(500, 'x'));
  EXPECT_EQ(shown.size(), 83u);
  EXPECT_EQ(shown.substr(80), "...");
}

}  // namespace
}  // namespace cb
