// The expected-performance model: hardware facts read from fixture sysfs trees (with the NVML
// answers their snapshots carry), the roof of each path kind, and the public healthy figures
// (report/roof/reference_figures.json) judged against it.
#include <gtest/gtest.h>

#include <fstream>

#include "common/error.hpp"
#include "probes/roof_facts.hpp"
#include "probes/topology.hpp"
#include "report/check/check.hpp"
#include "report/roof/roof.hpp"

namespace cb {
namespace {

using nlohmann::json;

std::string fixture(const std::string& name) {
  return std::string(CB_TEST_DATA) + "/sysfs/" + name;
}

json facts_of(const std::string& tree) {
  Sysfs sys(fixture(tree));
  Topology topo = probe_topology(sys);
  RoofInputs in;
  in.host_memory = false;
  return roof_facts(topo, in);
}

// The DGX H100 fixture with its faults repaired (every GPU at 18 NVLinks and Gen5 x16, every
// NIC port up), reshaped into another system: GPU generation, NVLinks, NICs.
json system_facts(const std::string& hardware, int nics = 8, double nic_gbps = 400) {
  json f = facts_of("dgx-h100");
  for (auto& g : f["gpus"]) {
    g["pcie_GBps"] = pcie_GBps(32, 16);
    g["pcie_to_cpu_GBps"] = pcie_GBps(32, 16);
    if (hardware == "H100") {
      g["nvlinks_up"] = 18;
    } else if (hardware == "A100") {
      g["nvlinks_up"] = 12, g["nvlink_generation"] = 3, g["nvlink_link_GBps"] = 25;
      g["nvls"] = false;
    } else if (hardware == "B300") {
      g["nvlinks_up"] = 18, g["nvlink_generation"] = 5, g["nvlink_link_GBps"] = 50;
    } else if (hardware == "H100 PCIe") {
      g["nvlinks_up"] = 0, g["nvls"] = false, g["nvswitch"] = false;
    }
  }
  f["nics"] = json::array();
  for (int i = 0; i < nics; ++i) f["nics"].push_back({{"name", "mlx5"}, {"gbps", nic_gbps}});
  f["host_memory"] = {{"copy_1thread_GBps", 20}, {"copy_all_GBps", 400}};
  return f;
}

json topology_of(const json& facts, int hosts = 1) {
  json t = {{"roof_facts", json::object()}};
  for (int h = 1; h <= hosts; ++h) t["roof_facts"]["node" + std::to_string(h)] = facts;
  return t;
}

double bus_factor(const std::string& c, int n) {
  if (c == "allreduce") return 2.0 * (n - 1) / n;
  if (c == "allgather" || c == "reduce_scatter" || c == "alltoall") return (n - 1.0) / n;
  return 1;
}

ResultRecord record(const std::string& backend, const std::string& collective,
                    const std::string& algorithm, int nranks, int nnodes, double busbw,
                    std::uint64_t bytes = 1ULL << 30) {
  ResultRecord r;
  r.backend = backend;
  r.collective = collective;
  r.algorithm = algorithm;
  r.dtype = "float";
  r.nranks = nranks;
  r.nnodes = nnodes;
  r.bytes = bytes;
  r.busbw_GBps = busbw;
  r.algbw_GBps = busbw / bus_factor(collective, nranks);
  return r;
}

TEST(RoofFacts, DgxH100FixtureGivesNvlink4PerGpuAndTheDegradedLinks) {
  json f = facts_of("dgx-h100");
  ASSERT_EQ(f["gpus"].size(), 8u);
  EXPECT_EQ(f["gpus"][0]["nvlinks_up"], 18);
  EXPECT_EQ(f["gpus"][0]["nvlink_generation"], 4);
  EXPECT_EQ(f["gpus"][0]["nvlink_link_GBps"], 25);
  EXPECT_TRUE(f["gpus"][0]["nvls"].get<bool>());
  EXPECT_EQ(f["gpus"][6]["nvlinks_up"], 17);  // one link down in the fixture
  // GPU 3's link trained down to x8: half of GPU 0's Gen5 x16.
  EXPECT_NEAR(f["gpus"][0]["pcie_GBps"].get<double>(), 63.0, 0.1);
  EXPECT_NEAR(f["gpus"][3]["pcie_GBps"].get<double>(), f["gpus"][0]["pcie_GBps"].get<double>() / 2,
              1e-9);
  EXPECT_TRUE(f["gdr"].get<bool>());
  EXPECT_EQ(f["nics"].size(), 7u);  // mlx5_5 is down
  EXPECT_EQ(f["nics"][0]["gbps"], 400);
}

TEST(RoofFacts, PcieRatesFollowTheEncoding) {
  EXPECT_NEAR(pcie_GBps(8, 16), 15.75, 0.01);
  EXPECT_NEAR(pcie_GBps(16, 16), 31.5, 0.01);
  EXPECT_NEAR(pcie_GBps(2.5, 16), 4.0, 0.01);
}

TEST(RoofFacts, GivenLinkRateReplacesWhatSysfsSays) {
  Sysfs sys(fixture("dgx-h100"));
  Topology topo = probe_topology(sys);
  RoofInputs in = parse_roof_inputs("1", "12.5");
  json f = roof_facts(topo, in);
  ASSERT_EQ(f["nics"].size(), 1u);
  EXPECT_EQ(f["nics"][0]["gbps"], 1);
  EXPECT_EQ(f["host_memory"]["copy_all_GBps"], 12.5);
  EXPECT_THROW(parse_roof_inputs("fast", ""), Error);
  EXPECT_THROW(parse_roof_inputs("", "-3"), Error);
}

TEST(Roof, NvlinkRingIsLinkRateAndNvlsExceedsIt) {
  json t = topology_of(system_facts("H100"));
  Roof ring = roof_for(record("nccl", "allreduce", "ring", 8, 1, 365), t);
  EXPECT_EQ(ring.kind, RoofKind::NvLink);
  EXPECT_DOUBLE_EQ(*ring.GBps, 450);
  EXPECT_EQ(ring.basis, "NVLink4 x18 via NVSwitch");
  Roof nvls = roof_for(record("nccl", "allreduce", "nvls", 8, 1, 480), t);
  EXPECT_EQ(nvls.kind, RoofKind::Nvls);
  EXPECT_DOUBLE_EQ(*nvls.GBps, 450 * 2.0 * 7 / 8);
  EXPECT_NE(nvls.basis.find("the switch reduces"), std::string::npos);
  // NVLS reduces allreduce only; allgather stays at the link rate.
  EXPECT_DOUBLE_EQ(*roof_for(record("nccl", "allgather", "default", 8, 1, 365), t).GBps, 450);
}

TEST(Roof, FewerNvlinksLowerTheRoof) {
  json f = facts_of("dgx-h100");  // GPU 6 has 17 links up
  Roof r = roof_for(record("nccl", "allreduce", "ring", 8, 1, 365), topology_of(f));
  EXPECT_DOUBLE_EQ(*r.GBps, 17 * 25);
}

TEST(Roof, TreeAtTwoNodesIsNotJudged) {
  json t = topology_of(system_facts("H100"), 2);
  Roof r = roof_for(record("nccl", "allreduce", "tree", 16, 2, 450), t);
  EXPECT_EQ(r.kind, RoofKind::Unknown);
  EXPECT_FALSE(r.GBps);
  EXPECT_NE(r.basis.find("not measured by tree at 2 nodes"), std::string::npos) << r.basis;
  EXPECT_NE(r.basis.find("use ring"), std::string::npos);
  EXPECT_TRUE(roof_for(record("nccl", "allreduce", "tree", 32, 4, 300),
                       topology_of(system_facts("H100"), 4))
                  .GBps);
}

TEST(Roof, AcrossNodesTheNicsOfAHostBoundRing) {
  json t = topology_of(system_facts("H100", 8, 400), 2);
  Roof r = roof_for(record("nccl", "allreduce", "ring", 16, 2, 396), t);
  EXPECT_EQ(r.kind, RoofKind::Network);
  EXPECT_DOUBLE_EQ(*r.GBps, 400);
  EXPECT_NE(r.basis.find("8 x 400 Gb/s per host, GDR"), std::string::npos) << r.basis;
}

TEST(Roof, AlltoallIsBoundedByOneNicPerGpu) {
  json t = topology_of(system_facts("H100", 8, 400), 2);
  Roof r = roof_for(record("nccl", "alltoall", "default", 16, 2, 60), t);
  // Each GPU sends 8 of its 15 peers' parts through its one 50 GB/s NIC.
  EXPECT_DOUBLE_EQ(*r.GBps, 50.0 * 15 / 8);
  EXPECT_NE(r.basis.find("1 NIC per rank"), std::string::npos);
}

TEST(Roof, WithoutGdrTrafficIsStagedThroughHostMemory) {
  json f = system_facts("H100", 8, 400);
  f["gdr"] = false;
  f["host_memory"] = {{"copy_1thread_GBps", 20}, {"copy_all_GBps", 300}};
  Roof r = roof_for(record("nccl", "allreduce", "ring", 16, 2, 100), topology_of(f, 2));
  EXPECT_DOUBLE_EQ(*r.GBps, 150);
  EXPECT_NE(r.basis.find("no GDR: host staging"), std::string::npos) << r.basis;
}

TEST(Roof, PcieThroughASwitchUsesTheGpuLinksAndThroughTheCpuTheNarrowestUplink) {
  json f = facts_of("workstation-4gpu");
  ASSERT_EQ(f["gpus"].size(), 4u);
  // GPUs 0 and 1 share a switch; with peer access on, their own links bound the path.
  json sw = f;
  sw["gpus"][0]["p2p_redirect"] = false, sw["gpus"][1]["p2p_redirect"] = false;
  Roof through_switch = roof_for(record("nccl", "allreduce", "ring", 2, 1, 10), topology_of(sw));
  EXPECT_EQ(through_switch.kind, RoofKind::Pcie);
  EXPECT_NE(through_switch.basis.find("through a switch"), std::string::npos)
      << through_switch.basis;
  EXPECT_DOUBLE_EQ(*through_switch.GBps, std::min(sw["gpus"][0]["pcie_GBps"].get<double>(),
                                                  sw["gpus"][1]["pcie_GBps"].get<double>()));
  // GPUs 2 and 3 sit on root ports: through the CPU.
  json cpu = f;
  cpu["gpus"] = json::array({f["gpus"][2], f["gpus"][3]});
  Roof through_cpu = roof_for(record("nccl", "allreduce", "ring", 2, 1, 10), topology_of(cpu));
  EXPECT_NE(through_cpu.basis.find("through the CPU"), std::string::npos) << through_cpu.basis;
  // The fixture's switch redirects peer requests (ACS): host staging.
  Roof staged = roof_for(record("nccl", "allreduce", "ring", 2, 1, 10), topology_of(f));
  EXPECT_NE(staged.basis.find("host staging"), std::string::npos) << staged.basis;
}

TEST(Roof, ALinkTrainedDownToX8HalvesThePcieRoof) {
  json f = system_facts("H100 PCIe");
  Roof full = roof_for(record("nccl", "allreduce", "ring", 8, 1, 30), topology_of(f));
  f["gpus"][3]["pcie_GBps"] = facts_of("dgx-h100")["gpus"][3]["pcie_GBps"];  // x8
  f["gpus"][3]["pcie_to_cpu_GBps"] = f["gpus"][3]["pcie_GBps"];
  Roof halved = roof_for(record("nccl", "allreduce", "ring", 8, 1, 30), topology_of(f));
  EXPECT_NEAR(*halved.GBps, *full.GBps / 2, 1e-9);
}

TEST(Roof, HostMemoryPerRankAndCopiesPerBusbwByte) {
  json f = {{"gpus", json::array()},
            {"nics", json::array()},
            {"host_memory", {{"copy_1thread_GBps", 10}, {"copy_all_GBps", 16}}}};
  json t = topology_of(f);
  Roof ar = roof_for(record("mpi", "allreduce", "default", 2, 1, 3), t);
  EXPECT_EQ(ar.kind, RoofKind::HostMemory);
  EXPECT_DOUBLE_EQ(*ar.GBps, 8 / 1.25);  // min(10, 16/2) per rank, 1.25 copies per byte
  EXPECT_DOUBLE_EQ(*roof_for(record("gloo", "allgather", "default", 2, 1, 3), t).GBps, 8);
  EXPECT_DOUBLE_EQ(*roof_for(record("mpi", "reduce_scatter", "default", 4, 1, 3), t).GBps, 4 / 1.5);
}

// A rooted collective's busiest rank copies while the others wait: one thread's rate, not a share.
TEST(Roof, RootedCollectivesAreBoundByOneThreadNotAShare) {
  json f = {{"gpus", json::array()},
            {"nics", json::array()},
            {"host_memory", {{"copy_1thread_GBps", 10}, {"copy_all_GBps", 12}}}};
  json t = topology_of(f);
  EXPECT_DOUBLE_EQ(*roof_for(record("mpi", "broadcast", "default", 2, 1, 3), t).GBps, 10);
  EXPECT_DOUBLE_EQ(*roof_for(record("mpi", "reduce", "default", 2, 1, 3), t).GBps, 10 / 1.5);
  EXPECT_DOUBLE_EQ(*roof_for(record("mpi", "gather", "default", 4, 1, 3), t).GBps, 10);
  EXPECT_DOUBLE_EQ(*roof_for(record("mpi", "allgather", "default", 2, 1, 3), t).GBps, 6);  // 12/2
}

// The buffers the ranks of a host touch, by hand from docs/output.md's size table (B = 8 MiB,
// 2 ranks): allreduce 2 x (B + B) = 32 MiB; allgather 2 x (B/2 + B) = 24 MiB; broadcast 2 x B =
// 16 MiB; reduce 2 x B + B = 24 MiB; gather B + 2 x B/2 = 16 MiB; in place allreduce 2 x B.
TEST(Roof, WorkingSetOfTheRanksOfAHost) {
  const double mib = 1 << 20;
  auto ws = [](const std::string& c, const std::string& placement = "out") {
    ResultRecord r = record("mpi", c, "default", 2, 1, 1, 8u << 20);
    r.placement = placement;
    return host_working_set_bytes(r, 2);
  };
  EXPECT_DOUBLE_EQ(ws("allreduce"), 32 * mib);
  EXPECT_DOUBLE_EQ(ws("alltoall"), 32 * mib);
  EXPECT_DOUBLE_EQ(ws("allgather"), 24 * mib);
  EXPECT_DOUBLE_EQ(ws("reduce_scatter"), 24 * mib);
  EXPECT_DOUBLE_EQ(ws("broadcast"), 16 * mib);
  EXPECT_DOUBLE_EQ(ws("reduce"), 24 * mib);
  EXPECT_DOUBLE_EQ(ws("gather"), 16 * mib);
  EXPECT_DOUBLE_EQ(ws("scatter"), 16 * mib);
  EXPECT_DOUBLE_EQ(ws("allreduce", "in"), 16 * mib);
}

// This machine's caches (L1d 2 x 48 KiB, L2 2 x 1 MiB, L3 32 MiB: 34.09 MiB) and memory: a case
// whose buffers are within 2 x 34.09 = 68.2 MiB gets no roof and no efficiency, and says why;
// beyond, the host copy roof. Allreduce at 2 ranks: 16 MiB touches 64 MiB (cache), 32 MiB 128 MiB.
TEST(Roof, BuffersThatFitInTheCachesGetNoRoofAndSayWhy) {
  const double caches = 2 * 48 * 1024 + 2 * (1 << 20) + (32 << 20);
  json f = {
      {"gpus", json::array()},
      {"nics", json::array()},
      {"caches", {{"bytes", caches}, {"text", "L1d 2 x 48 KiB, L2 2 x 1 MiB, L3 1 x 32 MiB"}}},
      {"host_memory", {{"copy_1thread_GBps", 20}, {"copy_all_GBps", 40}}}};
  json t = topology_of(f);
  ResultRecord in_cache = record("mpi", "allreduce", "default", 2, 1, 30, 16u << 20);
  apply_roof(in_cache, t);
  EXPECT_FALSE(in_cache.roof_GBps);
  EXPECT_FALSE(in_cache.efficiency);
  EXPECT_EQ(roof_kind_of_basis(in_cache.roof_basis), RoofKind::Cache);
  EXPECT_NE(in_cache.roof_basis.find("the 2 ranks' buffers (64 MiB) are within 2 x the host's "
                                     "34.1 MiB of CPU caches (L1d 2 x 48 KiB"),
            std::string::npos)
      << in_cache.roof_basis;
  ResultRecord beyond = record("mpi", "allreduce", "default", 2, 1, 8, 32u << 20);
  apply_roof(beyond, t);
  ASSERT_TRUE(beyond.roof_GBps);
  EXPECT_DOUBLE_EQ(*beyond.roof_GBps, 16);  // min(20, 40/2) / 1.25
  ASSERT_TRUE(beyond.efficiency);
  EXPECT_DOUBLE_EQ(*beyond.efficiency, 0.5);
  // Every size in the caches: the collective is not judged, and the line says why.
  auto e = large_message_efficiency({&in_cache});
  EXPECT_FALSE(e.efficiency);
  EXPECT_NE(e.why_not.find("cache: the 2 ranks' buffers"), std::string::npos) << e.why_not;
  EXPECT_NE(e.why_not.find("at 16 MiB, the largest size: measure sizes beyond the caches"),
            std::string::npos)
      << e.why_not;
  // Without cache facts (a file written before them), the host copy roof as before.
  f.erase("caches");
  ResultRecord old = record("mpi", "allreduce", "default", 2, 1, 8, 16u << 20);
  apply_roof(old, topology_of(f));
  EXPECT_TRUE(old.efficiency);
}

TEST(Roof, EfficiencyOnlyWhereBandwidthDominates) {
  json f = {{"gpus", json::array()},
            {"nics", json::array()},
            {"host_memory", {{"copy_1thread_GBps", 10}, {"copy_all_GBps", 20}}}};
  json t = topology_of(f);
  ResultRecord small = record("mpi", "allgather", "default", 2, 1, 2, 64 << 10);
  apply_roof(small, t);
  EXPECT_TRUE(small.roof_GBps);
  EXPECT_FALSE(small.efficiency);  // 64 KiB x 1/2 at 10 GB/s: 3 us
  ResultRecord big = record("mpi", "allgather", "default", 2, 1, 5, 64 << 20);
  apply_roof(big, t);
  ASSERT_TRUE(big.efficiency);
  EXPECT_DOUBLE_EQ(*big.efficiency, 0.5);
}

TEST(Roof, UnknownHardwareIsNotJudgedNeverPassed) {
  ResultFile file;
  file.path = "r.json";
  file.meta_json = {{"topology", topology_of(json{{"gpus", json::array()},
                                                  {"nics", json::array()},
                                                  {"host_memory", nullptr}})}};
  file.records.push_back(record("nccl", "allreduce", "default", 8, 1, 400));
  auto items = evaluate_expect_auto({file}, ExpectOptions{});
  ASSERT_EQ(items.size(), 1u);
  EXPECT_FALSE(items[0].passed);
  EXPECT_EQ(items[0].severity, Severity::Warning);
  EXPECT_NE(items[0].measured.find("not judged: unknown: 8 ranks per host but 0 GPUs"),
            std::string::npos)
      << items[0].measured;
}

// Each public healthy figure passes the default threshold on its system's roof; the same figure
// 30 % lower fails it.
TEST(Roof, HealthyPublicFiguresPassAndThirtyPercentLowerFail) {
  std::ifstream in(std::string(CB_SOURCE_DIR) + "/report/roof/reference_figures.json");
  ASSERT_TRUE(in);
  json doc = json::parse(in);
  ASSERT_GE(doc["figures"].size(), 10u);
  for (const auto& fig : doc["figures"]) {
    SCOPED_TRACE(fig["system"].get<std::string>());
    ASSERT_FALSE(fig.value("source", "").empty());
    const int nnodes = fig["nnodes"];
    json t = topology_of(
        system_facts(fig["hardware"], fig.value("nics", 8), fig.value("nic_gbps", 400.0)), nnodes);
    for (double scale : {1.0, 0.7}) {
      ResultRecord r = record("nccl", fig["collective"], fig["algorithm"], fig["nranks"], nnodes,
                              fig["busbw_GBps"].get<double>() * scale);
      apply_roof(r, t);
      auto e = large_message_efficiency({&r});
      ASSERT_TRUE(e.efficiency) << r.roof_basis;
      auto limit = default_min_efficiency(e.kind);
      ASSERT_TRUE(limit);
      if (scale == 1.0) {
        EXPECT_GE(*e.efficiency, *limit) << r.roof_basis << " roof " << *r.roof_GBps;
        EXPECT_LE(*e.efficiency, 1.0) << r.roof_basis;
      } else {
        EXPECT_LT(*e.efficiency, *limit) << r.roof_basis << " roof " << *r.roof_GBps;
      }
    }
  }
}

// A result file of one host without GPUs or NICs whose memory copies 10 GB/s on one thread and
// 20 GB/s on all.
ResultFile host_memory_file() {
  json f = {{"gpus", json::array()},
            {"nics", json::array()},
            {"host_memory", {{"copy_1thread_GBps", 10}, {"copy_all_GBps", 20}}}};
  ResultFile file;
  file.path = "r.json";
  file.meta_json = {{"topology", topology_of(f)}};
  return file;
}

TEST(Roof, ExpectAutoFailsACollectiveBelowTheThresholdAndNamesIt) {
  ResultFile file = host_memory_file();
  for (std::uint64_t b : {16u << 20, 32u << 20, 64u << 20}) {
    file.records.push_back(record("mpi", "allgather", "default", 2, 1, 6, b));
    file.records.push_back(record("mpi", "broadcast", "default", 2, 1, 0.5, b));
  }
  ExpectOptions options;
  options.min_efficiency = 0.3;
  auto items = evaluate_expect_auto({file}, options);
  ASSERT_EQ(items.size(), 2u);
  EXPECT_TRUE(items[0].passed) << items[0].measured;
  EXPECT_FALSE(items[1].passed);
  EXPECT_EQ(items[1].severity, Severity::Error);
  EXPECT_NE(items[1].name.find("broadcast"), std::string::npos);
  EXPECT_NE(items[1].measured.find("broadcast: 0.05 of the 10 GB/s host memory roof"),
            std::string::npos)
      << items[1].measured;
}

// A library that page-faults its buffers in on every call is bound by its allocator: not judged
// against the memory roof, with the figures; a few faults per call change nothing.
TEST(Roof, ACollectiveThatPageFaultsItsBuffersEachCallIsNotJudgedAndSaysWhy) {
  ResultFile file = host_memory_file();
  for (std::uint64_t b : {4u << 20, 8u << 20, 16u << 20}) {
    ResultRecord faulting = record("mpi", "reduce_scatter", "default", 2, 1, 0.05, b);
    faulting.fault_bytes = b == (16u << 20) ? 8 << 20 : 4096;  // half of the call at 16 MiB
    file.records.push_back(faulting);
    ResultRecord mapped = record("mpi", "allgather", "default", 2, 1, 0.5, b);
    mapped.fault_bytes = static_cast<double>(b) * kAllocatorBoundShare * 0.99;
    file.records.push_back(mapped);
  }
  auto items = evaluate_expect_auto({file}, ExpectOptions{});
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].severity, Severity::Warning);
  EXPECT_FALSE(items[0].passed);
  EXPECT_NE(items[0].measured.find("not judged: 0.0075 of the 6.67 GB/s host memory roof, but "
                                   "the ranks page-faulted 8 MiB per call at 16 MiB"),
            std::string::npos)
      << items[0].measured;
  // Just below the share: judged as host memory is, against a healthy reference (none here).
  EXPECT_EQ(items[1].severity, Severity::Warning);
  EXPECT_NE(items[1].measured.find("not judged: no healthy reference for "), std::string::npos)
      << items[1].measured;
  EXPECT_NE(items[1].details.front().find("allgather: 0.05 of the 10 GB/s host memory roof"),
            std::string::npos)
      << items[1].details.front();
}

}  // namespace
}  // namespace cb
