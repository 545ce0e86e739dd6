// The run's plan as env:// ranks compare it: built from the typed plan, so that two spellings of
// one plan agree; every option that decides what is measured is in it and named when it
// differs; a rank's own options are not. Every row of run_flags() is held to one of the two.
#include "app/run_fingerprint.hpp"

#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "common/units.hpp"

namespace cb {
namespace {

using Given = std::vector<std::pair<std::string, std::string>>;

const Flag<RunRequest, RunPlan>& row(const std::string& long_name) {
  for (const auto& f : run_flags())
    if (f.long_name() == long_name) return f;
  throw std::runtime_error("no run flag " + long_name);
}

// The request a command line with `given` (long names; "on"/"off" for a toggle) makes.
RunRequest request(const Given& given) {
  RunRequest rq;
  for (const auto& [name, value] : given) {
    const auto& f = row(name);
    if (f.toggle) {
      rq.*f.toggle = value == "on";
    } else if (f.list) {
      (rq.*f.list).push_back(value);
    } else {
      f.text(rq) = value;
    }
  }
  return rq;
}

PlanFingerprint fingerprint(const Given& given) {
  return run_fingerprint(plan_run(request(given)));
}

Given with(Given base, const Given& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

const Given kGloo = {{"--backends", "gloo"}, {"--collectives", "allreduce"}};

TEST(RunFingerprint, TwoSpellingsOfOnePlanAgree) {
  const std::vector<std::pair<Given, Given>> same = {
      {{{"--max-bytes", "1M"}}, {{"--max-bytes", "1048576"}}},
      {{{"--max-bytes", "1MiB"}}, {{"--max-bytes", "1024K"}}},
      {{{"--max-bytes", "64M"}}, {}},  // -e's default on host memory
      {{{"--min-time", "0.05"}}, {{"--min-time", "5e-2"}}},
      {{{"--min-time", "0.05"}}, {}},
      {{{"--dtypes", "float"}}, {{"--dtypes", "fp32"}}},
      {{{"--memory", "host"}}, {}},
      {{{"--root", "0"}}, {}},
      {{{"--step-bytes", "1K"}, {"--step-factor", "4"}}, {{"--step-bytes", "1024"}}},
      {{{"--collectives", "allreduce,alltoallv"}, {"--split", "uniform"}},
       {{"--collectives", "allreduce,alltoallv"}}},
      {{{"--check", "on"}}, {}},
  };
  for (const auto& [a, b] : same) {
    const auto fa = fingerprint(with(kGloo, a));
    const auto fb = fingerprint(with(kGloo, b));
    EXPECT_EQ(fa.digest(), fb.digest()) << fa.encode() << "\n---\n" << fb.encode();
    EXPECT_FALSE(first_difference(fa, fb));
  }
}

TEST(RunFingerprint, ARanksOwnOptionsAreNoPartOfIt) {
  const auto plain = fingerprint(kGloo);
  for (const Given& own : std::vector<Given>{{{"--output", "/tmp/r.json"}},
                                             {{"--output", "/tmp/other.csv"}},
                                             {{"--format", "csv"}},
                                             {{"--progress", "never"}},
                                             {{"--nranks", "4"}},
                                             {{"--gloo-iface", "lo"}},
                                             {{"--roof-link-gbps", "100"}},
                                             {{"--roof-host-memory", "20"}}}) {
    EXPECT_EQ(fingerprint(with(kGloo, own)).digest(), plain.digest()) << own[0].first;
  }
}

TEST(RunFingerprint, StartsWithTheBuildAndTheSubcommand) {
  const auto f = fingerprint(kGloo);
  ASSERT_GE(f.options.size(), 2u);
  EXPECT_EQ(f.options[0].name, "commbench");
  EXPECT_EQ(f.options[1].name, "subcommand");
  EXPECT_EQ(f.options[1].value, "run");
  const auto replayed = run_fingerprint(plan_run(request(kGloo)), command_fingerprint("replay"));
  auto d = first_difference(replayed, f);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->option, "subcommand");
  EXPECT_EQ(d->theirs, "replay");
  EXPECT_EQ(d->ours, "run");
}

// For each option of the fingerprint: a base it is valid with, and two values ("" = not given).
struct Differing {
  std::string option;
  Given base;
  std::string a, b;
};

const Given kNccl = {
    {"--backends", "nccl"}, {"--collectives", "allreduce"}, {"--memory", "device"}};
const Given kAllToAllV = {{"--backends", "gloo"}, {"--collectives", "alltoallv"}};

std::vector<Differing> differing() {
  return {
      {"--collectives", {{"--backends", "gloo"}}, "allreduce", "broadcast"},
      {"--backends", {{"--collectives", "allreduce"}}, "gloo", "mpi"},
      {"--algorithms", kGloo, "", "ring"},
      {"--min-bytes", kGloo, "8", "16"},
      {"--max-bytes", kGloo, "1K", "1M"},
      {"--step-factor", kGloo, "2", "4"},
      {"--step-bytes", kGloo, "", "1K"},
      {"--dtypes", kGloo, "float", "double"},
      {"--ops", kGloo, "sum", "max"},
      {"--placement", kGloo, "out", "in"},
      {"--root", kGloo, "0", "all"},
      {"--warmup", kGloo, "", "3"},
      {"--iters", kGloo, "", "7"},
      {"--min-time", kGloo, "0.05", "0.1"},
      {"--check", kGloo, "on", "off"},
      {"--memory", {{"--collectives", "allreduce"}}, "host", "device"},
      {"--timeout", kGloo, "300", "60"},
      {"--gpus", kNccl, "", "2"},
      {"--cuda-graph", kNccl, "", "4"},
      {"--split", kAllToAllV, "uniform", "zipf:1.2"},
      {"--split-seed", kAllToAllV, "", "7"},
      {"--moe-hidden", kAllToAllV, "", "1024"},
  };
}

TEST(RunFingerprint, EachOptionThatDiffersIsNamedWithBothValues) {
  for (const auto& d : differing()) {
    auto given = [&](const std::string& v) {
      return v.empty() ? d.base : with(d.base, {{d.option, v}});
    };
    const auto theirs = fingerprint(given(d.b));
    const auto ours = fingerprint(given(d.a));
    auto diff = first_difference(theirs, ours);
    ASSERT_TRUE(diff) << d.option;
    EXPECT_EQ(diff->option, d.option);
    EXPECT_NE(diff->theirs, diff->ours) << d.option;
    EXPECT_NE(theirs.digest(), ours.digest()) << d.option;
  }
  // The values as the line shows them.
  const auto e = first_difference(fingerprint(with(kGloo, {{"--max-bytes", "1M"}})),
                                  fingerprint(with(kGloo, {{"--max-bytes", "1K"}})));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->theirs, "1 MiB");
  EXPECT_EQ(e->ours, "1 KiB");
}

TEST(RunFingerprint, EveryRunOptionIsComparedOrSaidToBeARanksOwn) {
  std::set<std::string> compared;
  for (const auto& d : differing()) compared.insert(d.option);
  const auto& own = run_options_not_agreed();
  for (const auto& f : run_flags()) {
    const std::string name = f.long_name();
    EXPECT_TRUE(compared.count(name) + own.count(name) == 1)
        << name << ": a run option must be in the fingerprint (with a case in differing()) or "
        << "in run_options_not_agreed(), not both";
  }
  for (const auto& [name, why] : own) EXPECT_NO_THROW(row(name)) << name << " (" << why << ")";
}

TEST(RunFingerprint, SizesAreExact) {
  EXPECT_EQ(exact_size(1 << 20), "1 MiB");
  EXPECT_EQ(exact_size(1000), "1000 B");
  EXPECT_EQ(exact_size(1536), "1536 B");
  EXPECT_EQ(exact_size(1025 << 10), "1025 KiB");
  EXPECT_EQ(exact_size((1ULL << 20) + 1), "1048577 B");
  EXPECT_EQ(exact_size(3ULL << 30), "3 GiB");
}

}  // namespace
}  // namespace cb
