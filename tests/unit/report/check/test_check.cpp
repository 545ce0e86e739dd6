#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "common/error.hpp"
#include "report/check/check.hpp"
#include "report/check/check_output.hpp"
#include "report_fixtures.hpp"

namespace cb {
namespace {

using test::result_fixture;

nlohmann::json topology(const char* name) {
  std::ifstream in(result_fixture(name));
  return nlohmann::json::parse(in);
}

CheckReport check(const std::string& spec_text, const std::vector<const char*>& results,
                  const nlohmann::json& topo = nullptr) {
  Spec spec = parse_spec(spec_text, "spec.toml");
  std::vector<ResultFile> files;
  for (const char* r : results) files.push_back(read_result_file(result_fixture(r)));
  return evaluate_spec(spec, files, topo, "fixture");
}

bool detail_has(const RequirementResult& r, const std::string& needle) {
  for (const auto& d : r.details) {
    if (d.find(needle) != std::string::npos) return true;
  }
  return false;
}

TEST(Check, BandwidthFloorPassesWithTheWorstRecordReported) {
  CheckReport r = check(
      "[[results]]\ncollective = \"allreduce\"\nbackend = \"mpi\"\nmin_bytes = \"64K\"\n"
      "min_busbw_GBps = 3\n",
      {"base.json"});
  ASSERT_EQ(r.items.size(), 1u);
  const RequirementResult& i = r.items[0];
  EXPECT_TRUE(i.passed) << i.measured;
  // 64 KiB in 20 us is the slowest of 64 KiB, 1 MiB and 16 MiB.
  EXPECT_NE(i.measured.find("worst busbw 3.28 GB/s at 64 KiB"), std::string::npos) << i.measured;
  EXPECT_NE(i.measured.find("3 records"), std::string::npos) << i.measured;
  EXPECT_EQ(i.expected, "busbw >= 3 GB/s");
  EXPECT_EQ(r.failed(), 0);
}

TEST(Check, ShortfallsFailWithMeasuredValuesPerRecord) {
  CheckReport r =
      check("[[results]]\ncollective = \"allreduce\"\nmin_bytes = \"64K\"\nmin_busbw_GBps = 5\n",
            {"base.json"});
  const RequirementResult& i = r.items[0];
  EXPECT_FALSE(i.passed);
  ASSERT_EQ(i.details.size(), 1u);
  EXPECT_NE(
      i.details[0].find("busbw 3.28 GB/s at 64 KiB (mpi/default float sum out, 2 ranks, base)"),
      std::string::npos)
      << i.details[0];
  EXPECT_EQ(r.failed(), 1);
}

TEST(Check, TimeAndTailLimits) {
  CheckReport r = check(
      "[[results]]\ncollective = \"allreduce\"\nmax_bytes = \"1K\"\nmax_time_us = 0.5\n"
      "[[results]]\ncollective = \"barrier\"\nmax_p99_us = 1\n",
      {"base.json"});
  EXPECT_FALSE(r.items[0].passed);  // 1 KiB takes 0.55 us
  EXPECT_TRUE(detail_has(r.items[0], "time 0.55 us at 1 KiB"));
  EXPECT_FALSE(detail_has(r.items[0], "at 8 B"));
  EXPECT_TRUE(r.items[1].passed) << r.items[1].measured;
}

// A file of one allreduce 1 MiB measured in launches of the given times (us).
ResultFile launches_of_times(const std::vector<double>& times) {
  ResultFile f;
  f.path = "launches.json";
  f.format = "json";
  int k = 0;
  for (double t : times) {
    ResultRecord r = test::mpi_allreduce_record(1 << 20);
    r.time_us = r.p50_us = r.p99_us = t;
    r.repeat = k++;
    f.records.push_back(r);
  }
  return f;
}

TEST(Check, OverLaunchesTheGeometricMeanIsJudgedAndTheNoiseSaid) {
  Spec spec = parse_spec("[[results]]\ncollective = \"allreduce\"\nmax_time_us = 100\n", "s.toml");
  // 110 and 121 us: geometric mean sqrt(110 x 121) = 115.4 us; two launches, sd of the logs
  // 0.0674, t(0.995; 1) = 63.66: the interval reaches far below 100.
  CheckReport wide = evaluate_spec(spec, {launches_of_times({110, 121})}, nullptr, "x");
  ASSERT_FALSE(wide.items[0].passed);
  EXPECT_NE(wide.items[0].measured.find("worst time 115"), std::string::npos)
      << wide.items[0].measured;
  EXPECT_NE(wide.items[0].measured.find("geometric mean of 2 launches"), std::string::npos);
  EXPECT_TRUE(detail_has(wide.items[0], "within their noise")) << wide.items[0].details[0];
  // Five steady launches at 109-111 us: wholly above the limit.
  CheckReport tight =
      evaluate_spec(spec, {launches_of_times({110, 111, 109, 110, 110})}, nullptr, "x");
  ASSERT_FALSE(tight.items[0].passed);
  EXPECT_TRUE(detail_has(tight.items[0], "5 launches, 99 % CI 1")) << tight.items[0].details[0];
  EXPECT_TRUE(detail_has(tight.items[0], "beyond their noise")) << tight.items[0].details[0];
  // One slow launch of five (a machine mode) does not fail a limit the others meet by far.
  CheckReport mode = evaluate_spec(spec, {launches_of_times({50, 51, 49, 50, 100})}, nullptr, "x");
  EXPECT_TRUE(mode.items[0].passed) << mode.items[0].measured;
}

TEST(Check, NothingMeasuredFails) {
  CheckReport r = check("[[results]]\ncollective = \"allreduce\"\nnranks = 8\nmin_busbw_GBps = 1\n",
                        {"base.json"});
  EXPECT_FALSE(r.items[0].passed);
  EXPECT_EQ(r.items[0].measured, "nothing measured");
  EXPECT_TRUE(detail_has(r.items[0], "no result matches collective=allreduce, nranks=8"));
  CheckReport none = check("[[results]]\ncollective = \"allreduce\"\nmax_time_us = 1\n", {});
  EXPECT_EQ(none.failed(), 1);
}

TEST(Check, WarningsAreReportedButDoNotFail) {
  CheckReport r = check(
      "[[results]]\ncollective = \"allreduce\"\nmin_busbw_GBps = 100\nseverity = \"warning\"\n",
      {"base.json"});
  EXPECT_FALSE(r.items[0].passed);
  EXPECT_EQ(r.failed(), 0);
  EXPECT_EQ(r.warnings(), 1);
  EXPECT_EQ(r.summary(), "0 passed, 0 failed, 1 warning");
}

TEST(Check, WrongElementsFailWhateverTheSpeed) {
  ResultFile f = read_result_file(result_fixture("base.json"));
  f.records[3].wrong = 12;
  Spec spec = parse_spec("[[results]]\ncollective = \"allreduce\"\nmin_busbw_GBps = 0.001\n", "s");
  CheckReport r = evaluate_spec(spec, {f}, nullptr, "");
  EXPECT_FALSE(r.items[0].passed);
  EXPECT_TRUE(detail_has(r.items[0], "12 wrong elements at 1 MiB"));
}

const char* kDgxTopology =
    "[[topology]]\nname = \"shape\"\ngpus = 8\nnuma_nodes = 2\n"
    "[[topology]]\nname = \"nvlink\"\nnvlink_all_up = true\n"
    "[[topology]]\nname = \"pcie\"\npcie_min_gts = 32\npcie_min_width = 16\n"
    "[[topology]]\nname = \"ib\"\nib_ports = 8\nib_ports_active_min_gbps = 400\n"
    "[[topology]]\nname = \"gdr\"\ngdr = true\n"
    "[[topology]]\nname = \"clean\"\nno_warnings = true\n";

TEST(CheckTopology, HealthyNodePassesEveryRequirement) {
  CheckReport r = check(kDgxTopology, {}, topology("topology-dgx-h100.json"));
  for (const auto& i : r.items) EXPECT_TRUE(i.passed) << i.name << ": " << i.measured;
  // Idle GPUs sit at 2.5 GT/s; they are judged by what their link and the port above can do.
  EXPECT_EQ(r.items[2].measured, "slowest link 32 GT/s; narrowest link x16");
  EXPECT_EQ(r.items[3].measured, "8 InfiniBand ports; 8 of 8 IB ports active, slowest 400 Gb/s");
}

TEST(CheckTopology, DegradedNodeFailsNamingTheDevices) {
  CheckReport r = check(kDgxTopology, {}, topology("topology-dgx-h100-degraded.json"));
  EXPECT_TRUE(r.items[0].passed);
  EXPECT_FALSE(r.items[1].passed);
  EXPECT_TRUE(detail_has(r.items[1], "GPU 3 (0000:5d:00.0): 12 of 18 NVLinks up"));
  EXPECT_FALSE(r.items[2].passed);
  EXPECT_TRUE(detail_has(r.items[2], "GPU 4 (0000:9a:00.0): 16 GT/s"));
  EXPECT_TRUE(detail_has(r.items[2], "GPU 4 (0000:9a:00.0): x8"));
  EXPECT_FALSE(r.items[3].passed);
  EXPECT_TRUE(detail_has(r.items[3], "mlx5_5 port 1: state DOWN"));
  EXPECT_FALSE(r.items[4].passed);
  EXPECT_EQ(r.items[4].measured, "no GPUDirect RDMA module");
  EXPECT_FALSE(r.items[5].passed);
  EXPECT_TRUE(detail_has(r.items[5], "mlx5_5 port 1: DOWN"));
  EXPECT_EQ(r.failed(), 5);
}

TEST(CheckTopology, NvlinksAreCountedAgainstEachGpusTotal) {
  // Every GPU lost the same two links: equal counts, but short of the 18 each one has.
  nlohmann::json t = topology("topology-dgx-h100.json");
  for (auto& g : t["gpus"]) g["nvlinks_up"] = 16;
  CheckReport r = check("[[topology]]\nnvlink_all_up = true\n", {}, t);
  EXPECT_FALSE(r.items[0].passed);
  EXPECT_TRUE(detail_has(r.items[0], "GPU 0 (0000:18:00.0): 16 of 18 NVLinks up"));
  // Without NVML's totals, the best-connected GPU sets the count.
  for (auto& g : t["gpus"]) g["nvlinks_total"] = nullptr;
  EXPECT_TRUE(check("[[topology]]\nnvlink_all_up = true\n", {}, t).items[0].passed);
}

TEST(CheckTopology, MachineWithoutGpusOrRdmaNics) {
  CheckReport r = check(
      "[[topology]]\ngpus = 0\nnuma_nodes = 1\n[[topology]]\npcie_min_width = 16\n"
      "[[topology]]\nib_ports_active_min_gbps = 100\n",
      {}, topology("topology-ci.json"));
  EXPECT_TRUE(r.items[0].passed) << r.items[0].measured;
  EXPECT_EQ(r.items[0].measured, "0 GPUs; 1 NUMA node");
  EXPECT_FALSE(r.items[1].passed);
  EXPECT_TRUE(detail_has(r.items[1], "no GPU or RDMA NIC"));
  EXPECT_FALSE(r.items[2].passed);
  EXPECT_TRUE(detail_has(r.items[2], "no InfiniBand ports"));
}

TEST(CheckTopology, DocumentsAreValidated) {
  EXPECT_NO_THROW(validate_topology(topology("topology-ci.json"), "t"));
  EXPECT_THROW(validate_topology(nlohmann::json::array(), "t"), Error);
  EXPECT_THROW(validate_topology({{"schema", "commbench/result/v1"}}, "t"), Error);
  EXPECT_THROW(validate_topology({{"schema", "commbench/topology/v1"}, {"gpus", 3}}, "t"), Error);
}

TEST(CheckOutput, JUnitHasOneTestcasePerRequirementAndFailuresCarryMeasurements) {
  CheckReport r = check(
      "[[results]]\nname = \"floor <&>\"\ncollective = \"allreduce\"\nmin_busbw_GBps = 5\n"
      "[[results]]\ncollective = \"allreduce\"\nmax_time_us = 1\nmax_bytes = \"1K\"\n"
      "[[results]]\ncollective = \"allreduce\"\nmin_busbw_GBps = 50\nseverity = \"warning\"\n",
      {"base.json"});
  std::ostringstream xml;
  write_junit(check_junit_suite(r, "2026-11-21T00:00:00Z", "host"), xml);
  std::string s = xml.str();
  EXPECT_NE(s.find("<testsuite name=\"commbench check spec\" tests=\"3\" failures=\"1\""),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("name=\"floor &lt;&amp;&gt;\""), std::string::npos);
  EXPECT_NE(s.find("<failure message=\"worst busbw"), std::string::npos);
  EXPECT_NE(s.find("(expected busbw &gt;= 5 GB/s)\""), std::string::npos) << s;
  EXPECT_NE(s.find("WARNING: not met"), std::string::npos);
  std::size_t cases = 0;
  for (auto p = s.find("<testcase "); p != std::string::npos; p = s.find("<testcase ", p + 1))
    ++cases;
  EXPECT_EQ(cases, 3u);
}

TEST(CheckOutput, TableJsonAndMarkdown) {
  CheckReport r =
      check("[[results]]\ncollective = \"allreduce\"\nmin_busbw_GBps = 5\n", {"base.json"});
  std::ostringstream table, json, md;
  kCheckFormats.named("table").write(r, table);
  kCheckFormats.named("json").write(r, json);
  kCheckFormats.named("md").write(r, md);
  EXPECT_NE(table.str().find("FAIL    error"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("# 0 passed, 1 failed, 0 warnings"), std::string::npos);
  auto doc = nlohmann::json::parse(json.str());
  EXPECT_EQ(doc["schema"], "commbench/check/v1");
  EXPECT_EQ(doc["requirements"][0]["status"], "fail");
  EXPECT_EQ(doc["summary"]["ok"], false);
  EXPECT_NE(md.str().find("**1 failed**"), std::string::npos);
  EXPECT_THROW(kCheckFormats.named("csv"), Error);
}

// The check's rules read the topology once, into types: labels, links and the upstream port's
// link by address, IB port states without sysfs's number, cluster hosts and their differences.
TEST(TopologyFacts, ReadOnceIntoTypes) {
  nlohmann::json host = nlohmann::json::parse(R"({
    "schema": "commbench/topology/v1",
    "numa_nodes": [{"id": 0}, {"id": 1}],
    "pci_devices": [
      {"bdf": "0000:17:00.0", "link": {"current_gts": 32, "max_gts": 32, "current_width": 16}},
      {"bdf": "0000:18:00.0", "parent": "0000:17:00.0",
       "link": {"current_gts": 2.5, "max_gts": 32, "current_width": 16}},
      {"bdf": "0000:19:00.0", "link": {"current_gts": 16, "current_width": 8}}],
    "gpus": [{"index": 0, "bdf": "0000:18:00.0", "nvlinks_up": 17, "nvlinks_total": 18}],
    "nics": [{"name": "mlx5_0", "bdf": "0000:19:00.0",
              "ports": [{"port": 1, "state": "4: ACTIVE", "rate_gbps": 400,
                         "link_layer": "InfiniBand"},
                        {"port": 2, "state": "4: ACTIVE", "link_layer": "Ethernet"}]},
             {"name": "eth0", "bdf": "0000:1a:00.0"}],
    "gdr": {"present": true, "module": "nvidia_peermem"},
    "warnings": ["one", 2]})");
  TopologyFacts t = topology_facts(host);
  ASSERT_FALSE(t.cluster);
  EXPECT_EQ(t.host.numa_nodes, 2u);
  ASSERT_EQ(t.host.gpus.size(), 1u);
  EXPECT_EQ(t.host.gpus[0].label, "GPU 0 (0000:18:00.0)");
  EXPECT_EQ(t.host.gpus[0].nvlinks_up, 17);
  EXPECT_EQ(t.host.gpus[0].nvlinks_total, 18);
  ASSERT_EQ(t.host.link_devices.size(), 2u);  // the GPU and the RDMA NIC, not eth0
  const LinkDeviceFacts& gpu = t.host.link_devices[0];
  EXPECT_TRUE(gpu.gpu);
  ASSERT_TRUE(gpu.link && gpu.parent);
  EXPECT_EQ(gpu.link->current_gts, 2.5);
  EXPECT_EQ(gpu.parent->max_gts, 32);
  const LinkDeviceFacts& nic = t.host.link_devices[1];
  EXPECT_EQ(nic.label, "mlx5_0 (0000:19:00.0)");
  EXPECT_FALSE(nic.gpu);
  ASSERT_TRUE(nic.link);
  EXPECT_FALSE(nic.link->max_gts);
  EXPECT_FALSE(nic.parent);
  ASSERT_EQ(t.host.ib_ports.size(), 1u);  // the Ethernet port is not an IB port
  EXPECT_EQ(t.host.ib_ports[0].label, "mlx5_0 port 1");
  EXPECT_EQ(t.host.ib_ports[0].state, "ACTIVE");
  EXPECT_EQ(t.host.ib_ports[0].rate_gbps, 400);
  EXPECT_TRUE(t.host.gdr_present);
  EXPECT_EQ(t.host.gdr_module, "nvidia_peermem");
  EXPECT_EQ(t.host.warnings, (std::vector<std::string>{"one", "2"}));

  nlohmann::json cluster = {
      {"schema", "commbench/cluster-topology/v1"},
      {"hosts", {{{"host", "a"}, {"topology", host}}, {{"host", "b"}, {"topology", host}}}},
      {"groups", {{{"hosts", {"a"}}}, {{"hosts", {"b"}}}}},
      {"differences", {{{"host", "b"}, {"field", "gpus"}, {"value", 7}, {"majority", 8}}}}};
  TopologyFacts c = topology_facts(cluster);
  ASSERT_TRUE(c.cluster);
  ASSERT_EQ(c.hosts.size(), 2u);
  EXPECT_EQ(c.hosts[1].name, "b");
  EXPECT_EQ(c.hosts[1].facts.gpus.size(), 1u);
  EXPECT_EQ(c.odd_hosts, std::vector<std::string>{"b"});
  EXPECT_EQ(c.differences, std::vector<std::string>{"b: gpus = 7 (majority 8)"});
}

}  // namespace
}  // namespace cb
