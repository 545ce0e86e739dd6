// check --expect auto on host memory (against healthy references of the same library, machine
// and mode) and across hosts (each host against its peers' median), against values worked out by
// hand.
#include <gtest/gtest.h>

#include <cmath>

#include "common/error.hpp"
#include "report/check/check.hpp"
#include "report/check/host_reference.hpp"
#include "report/repetitions.hpp"
#include "report_fixtures.hpp"

namespace cb {
namespace {

using nlohmann::json;

const MachineOf kMachine{"AMD EPYC", 2};

ResultRecord allreduce(std::uint64_t bytes, double busbw,
                       const std::string& library = "Open MPI 4.1.4") {
  ResultRecord r = test::mpi_allreduce_record(bytes);
  r.library = library;
  r.busbw_GBps = busbw;
  r.algbw_GBps = busbw;
  r.time_us = static_cast<double>(bytes) / busbw / 1e3;
  r.p50_us = r.time_us;
  return r;
}

// Six healthy launches at 100 ns / 100 us, load 1, each reaching 5, 5.5, 6, 6, 6.5 and 7 GB/s at
// 32 and 64 MiB: the median is 6, the launches' own ratios 0.8333 .. 1.1667 (1.4x apart), and the
// threshold sqrt(0.8333 x 1.1667 / 2) = 0.69722.
HostReference reference(std::vector<double> figures = {5, 5.5, 6, 6, 6.5, 7}) {
  HostReference h;
  h.source = "test";
  h.cpu_model = "AMD EPYC";
  h.cpus = 2;
  h.backend = "mpi";
  h.library = "Open MPI 4.1.4";
  h.nranks = 2;
  for (std::size_t i = 0; i < figures.size(); ++i) h.launches.push_back({100, 100, 1, 1, 1, 0});
  for (std::uint64_t b : {32u << 20, 64u << 20}) {
    h.busbw[reference_case_of(allreduce(b, 1))] = figures;
  }
  return h;
}

LaunchConditions quiet(double pingpong = 100) {
  return {pingpong, 100, 1, 1, 1, 0};
}

HostJudgement judge(double busbw, const LaunchConditions& run = quiet(),
                    const HostReference& h = reference(),
                    const std::string& library = "Open MPI 4.1.4") {
  std::vector<ResultRecord> records = {allreduce(16u << 20, busbw * 1.5, library),
                                       allreduce(32u << 20, busbw, library),
                                       allreduce(64u << 20, busbw, library)};
  std::vector<const ResultRecord*> p;
  for (const auto& r : records) p.push_back(&r);
  return judge_against_references(p, kMachine, run, {h});
}

TEST(HostReference, AHealthyLaunchPassesAndOneTwiceAsSlowFails) {
  HostJudgement ok = judge(6);
  ASSERT_TRUE(ok.judged) << ok.measured;
  EXPECT_TRUE(ok.passed);
  EXPECT_NEAR(ok.ratio, 1, 1e-12);
  EXPECT_NEAR(ok.healthy_low, 5.0 / 6, 1e-12);
  EXPECT_NEAR(ok.healthy_high, 7.0 / 6, 1e-12);
  EXPECT_NEAR(ok.threshold, 0.697217, 1e-6);
  EXPECT_EQ(ok.launches, 6);
  EXPECT_EQ(ok.measured.rfind("allreduce: busbw 6.00 GB/s at 32 MiB-64 MiB, 1.00 of the healthy "
                              "reference's 6.00 GB/s (Open MPI 4.1.4 at 2 ranks on AMD EPYC x 2, 6 "
                              "launches whose control agrees",
                              0),
            0u)
      << ok.measured;
  // The slowest healthy launch passes; the fastest one at half speed fails.
  EXPECT_TRUE(judge(5).passed);
  EXPECT_FALSE(judge(3.5).passed);
  HostJudgement slow = judge(3);
  ASSERT_TRUE(slow.judged);
  EXPECT_FALSE(slow.passed);
  EXPECT_NEAR(slow.ratio, 0.5, 1e-12);
  EXPECT_EQ(slow.expected,
            ">= 0.70 of the reference: its healthy launches reached 0.83-1.17 of "
            "it, and a node twice as slow as the fastest of them 0.58: 0.50 is "
            "beyond their noise");
  // Just either side of the threshold: 0.697217 x 6 = 4.1833 GB/s.
  EXPECT_TRUE(judge(4.19).passed);
  EXPECT_FALSE(judge(4.18).passed);
}

TEST(HostReference, ALaunchInAnotherModeIsNotJudged) {
  HostJudgement j = judge(3, quiet(300));
  EXPECT_FALSE(j.judged);
  EXPECT_EQ(j.measured.rfind("not judged: this launch's control (core-to-core round trip 300 ns, "
                             "compute loop 100 us) agrees with 0 of the reference's 6 quiet "
                             "launches",
                             0),
            0u)
      << j.measured;
  LaunchConditions moved = quiet();
  moved.pingpong_moved = 2;
  EXPECT_NE(judge(3, moved).measured.find("not judged: the machine changed during this launch"),
            std::string::npos);
  LaunchConditions busy = quiet();
  busy.load_average = 3.1;  // above 1.5 per CPU on 2 CPUs
  EXPECT_NE(judge(3, busy).measured.find("not judged: the host was busy (load average 3.1 at the "
                                         "launch's start on 2 CPUs; judged up to 3)"),
            std::string::npos);
  busy.load_average = 3;
  EXPECT_TRUE(judge(3, busy).judged);
  // A reference measured on a busy host would pass a quiet node twice as slow: it does not count.
  HostReference loaded = reference();
  for (auto& l : loaded.launches) l.load_average = 11;
  EXPECT_NE(judge(3, quiet(), loaded)
                .measured.find("not judged: 0 of the reference's 6 launches "
                               "ran on a quiet host"),
            std::string::npos);
  LaunchConditions none;
  EXPECT_NE(judge(3, none).measured.find("not judged: no control measurement"), std::string::npos);
}

// Healthy launches 3 .. 8 GB/s (median 5.5: 0.545 .. 1.455 of it, 2.7x apart): a node twice as
// slow as the fastest (0.727) would pass the slowest healthy one's figure, so nothing is judged.
TEST(HostReference, HealthyLaunchesTooFarApartJudgeNothing) {
  HostJudgement j = judge(2, quiet(), reference({3, 4, 5, 6, 7, 8}));
  EXPECT_FALSE(j.judged);
  EXPECT_NE(j.measured.find("the healthy launches themselves reached 0.55-1.45 of it (2.7x apart, "
                            "more than 1.6x)"),
            std::string::npos)
      << j.measured;
}

TEST(HostReference, NoReferenceForTheLibraryOrMachineIsNotJudgedAndSaysHowToMeasureOne) {
  HostJudgement j = judge(3, quiet(), reference(), "MPICH 4.0.2");
  EXPECT_FALSE(j.judged);
  EXPECT_EQ(j.measured.rfind("not judged: no healthy reference for MPICH 4.0.2 allreduce at 2 "
                             "ranks on this machine (AMD EPYC, 2 CPUs): measure one on a healthy "
                             "node (`commbench run -B mpi -N 2 -c allreduce -b 16M -e 64M --repeat "
                             "10 --output ref.json`) and pass --reference ref.json",
                             0),
            0u)
      << j.measured;
  // Too few launches in the machine's mode.
  HostJudgement few = judge(3, quiet(), reference({5, 6, 7}));
  EXPECT_FALSE(few.judged);
  EXPECT_NE(few.measured.find("not judged: 3 of the reference's 3 launches ran on a quiet host"),
            std::string::npos)
      << few.measured;
}

// A healthy `run --repeat 6` file becomes a reference: one launch per repetition, with its control.
TEST(HostReference, AHealthyRunWithRepetitionsIsAReference) {
  ResultFile f;
  f.path = "ref.json";
  f.format = "json";
  RunMeta m;
  m.hosts = {"node1"};
  const std::vector<double> figures = {5, 5.5, 6, 6, 6.5, 7};
  for (int i = 0; i < 6; ++i) {
    LaunchControl c;
    c.repeat = i;
    c.samples = {{"start", 100, 100}, {"end", 100, 100}};
    c.load_average = 1;
    m.launches.push_back(c);
  }
  for (std::uint64_t b : {32u << 20, 64u << 20}) {
    std::vector<ResultRecord> launches;
    for (int i = 0; i < 6; ++i) {
      ResultRecord r = allreduce(b, figures[i]);
      r.repeat = i;
      launches.push_back(r);
    }
    f.records.push_back(summarize_repetitions(launches));
  }
  f.meta = m;
  f.meta_json = json(m);
  f.meta_json["topology"] = {{"roof_facts", {{"node1", {{"cpu_model", "AMD EPYC"}, {"cpus", 2}}}}}};
  std::vector<HostReference> refs = host_references_from(f);
  ASSERT_EQ(refs.size(), 1u);
  EXPECT_EQ(refs[0].launches.size(), 6u);
  EXPECT_EQ(refs[0].busbw.at(reference_case_of(allreduce(64u << 20, 1))), figures);
  std::vector<ResultRecord> run = {allreduce(32u << 20, 3), allreduce(64u << 20, 3)};
  HostJudgement j = judge_against_references({&run[0], &run[1]}, machine_of(f), quiet(), refs);
  EXPECT_TRUE(j.judged);
  EXPECT_FALSE(j.passed);
  // A file without the machine's facts or control is refused, naming it.
  f.meta_json.erase("topology");
  EXPECT_THROW(host_references_from(f), Error);
  f.meta->launches.clear();
  EXPECT_THROW(host_references_from(f), Error);
}

TEST(HostReference, TheBuiltInTableParses) {
  EXPECT_NO_THROW(builtin_host_references());
  EXPECT_THROW(parse_host_references(json{{"schema", "x"}}, "t.json"), Error);
}

// --- across hosts ---------------------------------------------------------------------------

ResultFile host_file(const std::string& host, double busbw) {
  ResultFile f;
  f.path = host + ".json";
  f.format = "json";
  RunMeta m;
  m.hosts = {host};
  f.meta = m;
  f.meta_json = json(m);
  for (std::uint64_t b : {16u << 20, 32u << 20, 64u << 20})
    f.records.push_back(allreduce(b, busbw));
  return f;
}

// h1-h3 at 6 GB/s, h4 at 3: h4's peers' median is 6 (0.50 of it), the others' peers' median 6.
TEST(Fleet, AHostAtHalfItsPeersFailsNamingIt) {
  auto items = evaluate_fleet(
      {host_file("h1", 6), host_file("h2", 6), host_file("h3", 6), host_file("h4", 3)}, 0.75);
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].name, "allreduce (mpi/default) across 4 hosts");
  EXPECT_FALSE(items[0].passed);
  EXPECT_EQ(items[0].measured,
            "h4: busbw 3.00 GB/s at 16 MiB-64 MiB, 0.50 of its 3 peers' median; "
            "the others 1.00-1.00");
  ASSERT_EQ(items[0].details.size(), 1u);
  EXPECT_EQ(items[0].details[0].rfind("h4: ", 0), 0u);
  // 4.6 of 6 is 0.767: within 0.75.
  EXPECT_TRUE(evaluate_fleet({host_file("h1", 6), host_file("h2", 6), host_file("h3", 4.6)}, 0.75)
                  .front()
                  .passed);
  // Two hosts: each against the other; the slower at half fails.
  auto two = evaluate_fleet({host_file("h1", 6), host_file("h2", 3)}, 0.75);
  ASSERT_EQ(two.size(), 1u);
  EXPECT_FALSE(two[0].passed);
  EXPECT_NE(two[0].measured.find("h2: busbw 3.00 GB/s at 16 MiB-64 MiB, 0.50 of its 1 peer' "),
            std::string::npos)
      << two[0].measured;
  EXPECT_TRUE(evaluate_fleet({host_file("h1", 6)}, 0.75).empty());  // one host: no fleet
}

// One file from three hosts: h3 copies at half its peers' figures (geometric mean of 10/20 and
// 20/40); the run's straggler judgement found rank 3.
TEST(Fleet, AMultiHostFileJudgesEachHostsMemoryAndTheStraggler) {
  ResultFile f;
  f.path = "cluster.json";
  f.format = "json";
  RunMeta m;
  m.hosts = {"h1", "h2", "h3"};
  RankStraggler s;
  s.found = true;
  s.rank = 3;
  s.host = "h3";
  s.slowest_cases = 28;
  s.cases = 29;
  s.ratio = 1.22;
  m.straggler = s;
  f.meta = m;
  f.meta_json = json(m);
  auto mem = [](double one, double all) {
    return json{{"host_memory", {{"copy_1thread_GBps", one}, {"copy_all_GBps", all}}}};
  };
  f.meta_json["topology"] = {
      {"roof_facts", {{"h1", mem(20, 40)}, {"h2", mem(20, 40)}, {"h3", mem(10, 20)}}}};
  auto items = evaluate_fleet({f}, 0.75);
  ASSERT_EQ(items.size(), 2u);
  EXPECT_FALSE(items[0].passed);
  EXPECT_EQ(items[0].measured.rfind("h3: memory copy 10.00 GB/s on one thread, 20.00 on all, 0.50 "
                                    "of its 2 peers' median",
                                    0),
            0u)
      << items[0].measured;
  EXPECT_FALSE(items[1].passed);
  EXPECT_EQ(items[1].measured,
            "rank 3 on h3 was the slowest in 28 of 29 cases, at 1.22x the "
            "median rank");
}

}  // namespace
}  // namespace cb
