// Topology probing against the fixture trees in tests/data/sysfs (see make_fixtures.py there)
// and the capture of the CI machine; plus the parsing helpers and the degraded rule.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "probes/cpulist.hpp"
#include "probes/nvml.hpp"
#include "probes/pci.hpp"
#include "probes/topology.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;

namespace cb {
namespace {

std::string fixture(const std::string& name) {
  return std::string(CB_TEST_DATA) + "/sysfs/" + name;
}

nlohmann::json probe(const std::string& root) {
  return probe_topology_json(root);
}

const nlohmann::json* pci(const nlohmann::json& doc, const std::string& bdf) {
  for (const auto& d : doc["pci_devices"]) {
    if (d["bdf"] == bdf) return &d;
  }
  return nullptr;
}

int count_containing(const nlohmann::json& warnings, const std::string& needle) {
  int n = 0;
  for (const auto& w : warnings) n += w.get<std::string>().find(needle) != std::string::npos;
  return n;
}

std::string temp_dir() {
  char tmpl[] = "/tmp/cbtopo-XXXXXX";
  return mkdtemp(tmpl);
}

TEST(Cpulist, ParsesRangesAndFormatsBack) {
  auto cpus = parse_cpulist("0-3,8,10-11\n");
  ASSERT_TRUE(cpus);
  EXPECT_EQ(*cpus, (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(format_cpulist(*cpus), "0-3,8,10-11");
  EXPECT_EQ(parse_cpulist("")->size(), 0u);
  EXPECT_FALSE(parse_cpulist("3-1"));
  EXPECT_FALSE(parse_cpulist("a"));
  EXPECT_EQ(cpus_from_mask({0x5UL, 0x1UL}), (std::vector<int>{0, 2, 64}));
}

TEST(Pci, ParsesIdentityAndLinkText) {
  EXPECT_TRUE(is_bdf("0000:18:00.0"));
  EXPECT_FALSE(is_bdf("pci0000:18"));
  EXPECT_EQ(pci_kind(0x030200, 0x10de), "gpu");
  EXPECT_EQ(pci_kind(0x030000, 0x1a03), "other");  // BMC VGA is not a GPU
  EXPECT_EQ(pci_kind(0x068000, 0x10de), "nvswitch");
  EXPECT_EQ(pci_kind(0x020700, 0x15b3), "nic");
  EXPECT_EQ(pci_kind(0x010802, 0x144d), "storage");
  EXPECT_EQ(pci_kind(0x060400, 0x1000), "bridge");
  EXPECT_EQ(parse_link_speed("32.0 GT/s PCIe"), 32.0);
  EXPECT_EQ(parse_link_speed("8 GT/s"), 8.0);
  EXPECT_FALSE(parse_link_speed("Unknown"));
  EXPECT_EQ(normalize_bus_id("00000000:1A:00.0"), "0000:1a:00.0");
  EXPECT_EQ(normalize_bus_id("0000:1A:00.0"), "0000:1a:00.0");
}

TEST(Pci, AcsNeedsRootUnlessTheExtendedSpaceWasRead) {
  EXPECT_EQ(parse_acs(std::string(64, '\0')).status, "needs root");
  EXPECT_EQ(parse_acs(std::string(256, '\0')).status, "not present");
  std::string cfg(4096, '\0');
  auto put32 = [&](std::size_t at, unsigned v) {
    for (int i = 0; i < 4; ++i) cfg[at + i] = static_cast<char>(v >> (8 * i));
  };
  put32(0x100, 0x0001u | (1u << 16) | (0x148u << 20));  // AER, next at 0x148
  put32(0x148, 0x000du | (1u << 16));                   // ACS
  put32(0x14c, 0x001du << 16);                          // control: SV, RR, CR, UF
  AcsInfo acs = parse_acs(cfg);
  EXPECT_EQ(acs.status, "read");
  EXPECT_EQ(acs.control, 0x1du);
  EXPECT_TRUE(acs.p2p_redirect);
}

PciDevice device(const std::string& bdf, const std::string& kind,
                 std::vector<std::string> ancestors, PciLink link) {
  PciDevice d;
  d.bdf = bdf;
  d.kind = kind;
  d.class_code = kind == "bridge" ? 0x060400 : kind == "gpu" ? 0x030200 : 0x020700;
  d.ancestors = std::move(ancestors);
  d.link = link;
  return d;
}

PciLink link(double cur, int cur_w, double max, int max_w) {
  PciLink l;
  l.current_gts = cur;
  l.current_width = cur_w;
  l.max_gts = max;
  l.max_width = max_w;
  return l;
}

// root port -> switch upstream port -> downstream port -> endpoint
std::vector<PciDevice> chain(const std::string& kind, PciLink endpoint, PciLink uplink) {
  std::vector<PciDevice> v{
      device("0000:00:01.0", "bridge", {}, link(32, 16, 32, 16)),
      device("0000:01:00.0", "bridge", {"0000:00:01.0"}, uplink),
      device("0000:02:00.0", "bridge", {"0000:00:01.0", "0000:01:00.0"}, endpoint),
      device("0000:03:00.0", kind, {"0000:00:01.0", "0000:01:00.0", "0000:02:00.0"}, endpoint),
      device("0000:02:01.0", "bridge", {"0000:00:01.0", "0000:01:00.0"}, link(2.5, 0, 32, 16))};
  v[0].children = {"0000:01:00.0"};
  v[1].children = {"0000:02:00.0", "0000:02:01.0"};
  v[2].children = {"0000:03:00.0"};
  judge_links(v);
  return v;
}

TEST(DegradedRule, IdleGpuSpeedIsPowerSavingButWidthIsAFault) {
  auto idle = chain("gpu", link(2.5, 16, 32, 16), link(32, 16, 32, 16));
  EXPECT_FALSE(idle[3].link->degraded);
  EXPECT_TRUE(idle[3].link->power_saving);
  EXPECT_FALSE(idle[2].link->degraded);  // the downstream port shows the same link
  EXPECT_TRUE(idle[4].link->empty_port);
  EXPECT_FALSE(idle[4].link->degraded);

  auto narrow = chain("gpu", link(32, 8, 32, 16), link(32, 16, 32, 16));
  EXPECT_TRUE(narrow[3].link->degraded);
  EXPECT_NE(narrow[3].link->reason.find("width x8 of x16"), std::string::npos);

  // The switch uplink is slow too: not power saving.
  auto slow_uplink = chain("gpu", link(16, 16, 32, 16), link(16, 16, 32, 16));
  EXPECT_TRUE(slow_uplink[3].link->degraded);
  EXPECT_TRUE(slow_uplink[1].link->degraded);
  EXPECT_FALSE(slow_uplink[3].link->power_saving);
}

TEST(DegradedRule, ReducedSpeedOnANicIsAFault) {
  auto nic = chain("nic", link(16, 16, 32, 16), link(32, 16, 32, 16));
  EXPECT_TRUE(nic[3].link->degraded);
  EXPECT_NE(nic[3].link->reason.find("speed 16 of 32 GT/s"), std::string::npos);
  auto healthy = chain("nic", link(32, 16, 32, 16), link(32, 16, 32, 16));
  EXPECT_FALSE(healthy[3].link->degraded);
  EXPECT_FALSE(healthy[1].link->degraded);
}

TEST(DgxFixture, NumaNodesAndDistances) {
  auto doc = probe(fixture("dgx-h100"));
  EXPECT_EQ(doc["schema"], "commbench/topology/v1");
  EXPECT_EQ(doc["host"], "dgx-h100-node01");
  ASSERT_EQ(doc["numa_nodes"].size(), 2u);
  EXPECT_EQ(doc["numa_nodes"][1]["distances"], nlohmann::json({21, 10}));
  EXPECT_EQ(doc["numa_nodes"][0]["cpus"].size(), 112u);
  EXPECT_EQ(doc["numa_nodes"][0]["memory_bytes"], 1056323584ULL * 1024);
}

TEST(DgxFixture, PciTreeLinksAndDegradedFlags) {
  auto doc = probe(fixture("dgx-h100"));
  int gpus = 0, nics = 0, switches = 0, storage = 0;
  for (const auto& d : doc["pci_devices"]) {
    gpus += d["kind"] == "gpu";
    nics += d["kind"] == "nic";
    switches += d["kind"] == "nvswitch";
    storage += d["kind"] == "storage";
  }
  EXPECT_EQ(gpus, 8);
  EXPECT_EQ(nics, 9);  // 8 HCAs and one 10 GbE port
  EXPECT_EQ(switches, 4);
  EXPECT_EQ(storage, 2);
  const auto* healthy = pci(doc, "0000:18:00.0");
  ASSERT_TRUE(healthy);
  EXPECT_EQ((*healthy)["parent"], "0000:17:00.0");
  EXPECT_EQ((*healthy)["numa_node"], 0);
  EXPECT_EQ((*healthy)["link"]["current_gts"], 32.0);
  EXPECT_EQ((*healthy)["link"]["max_width"], 16);
  EXPECT_EQ((*healthy)["link"]["degraded"], false);
  const auto* narrow = pci(doc, "0000:42:00.0");
  EXPECT_EQ((*narrow)["link"]["degraded"], true);
  EXPECT_EQ((*narrow)["link"]["current_width"], 8);
  const auto* idle = pci(doc, "0000:1a:00.0");
  EXPECT_EQ((*idle)["link"]["degraded"], false);
  EXPECT_EQ((*idle)["link"]["power_saving"], true);
  EXPECT_EQ((*pci(doc, "0000:16:00.0"))["acs"]["status"], "needs root");
  EXPECT_TRUE((*pci(doc, "0000:16:00.0"))["acs"]["p2p_redirect"].is_null());
}

TEST(DgxFixture, GpuMatrixNvlinksAndNicMatrix) {
  auto doc = probe(fixture("dgx-h100"));
  ASSERT_EQ(doc["gpus"].size(), 8u);
  EXPECT_EQ(doc["gpus"][0]["name"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(doc["gpus"][0]["nvlinks_up"], 18);
  EXPECT_EQ(doc["gpus"][6]["nvlinks_up"], 17);
  EXPECT_EQ(doc["gpus"][4]["numa_node"], 1);
  const auto& m = doc["gpu_matrix"];
  EXPECT_EQ(m[0][0], "X");
  EXPECT_EQ(m[0][1], "NV18");
  EXPECT_EQ(m[0][6], "NV17");
  EXPECT_EQ(m[6][0], "NV17");
  const auto& n = doc["gpu_nic_matrix"];
  ASSERT_EQ(n[0].size(), 8u);
  EXPECT_EQ(n[0][0], "PIX");   // same switch
  EXPECT_EQ(n[0][2], "NODE");  // other host bridge, same NUMA node
  EXPECT_EQ(n[0][4], "SYS");   // other socket
  EXPECT_EQ(n[7][7], "PIX");
}

TEST(DgxFixture, NvidiaDriverFromTheKernelModule) {
  EXPECT_EQ(probe(fixture("dgx-h100"))["nvidia_driver"], "550.90.07");
  EXPECT_TRUE(probe(fixture("workstation-4gpu"))["nvidia_driver"].is_null());
}

TEST(DgxFixture, PortsGdrIommuAndWarnings) {
  auto doc = probe(fixture("dgx-h100"));
  ASSERT_EQ(doc["nics"].size(), 8u);
  EXPECT_EQ(doc["nics"][0]["ports"][0]["state"], "ACTIVE");
  EXPECT_EQ(doc["nics"][0]["ports"][0]["rate_gbps"], 400.0);
  EXPECT_EQ(doc["nics"][0]["ports"][0]["link_layer"], "InfiniBand");
  EXPECT_EQ(doc["nics"][0]["numa_node"], 0);
  EXPECT_EQ(doc["nics"][5]["ports"][0]["state"], "DOWN");
  EXPECT_EQ(doc["gdr"]["present"], true);
  EXPECT_EQ(doc["gdr"]["module"], "nvidia_peermem");
  EXPECT_EQ(doc["iommu_groups"].size(), 55u);
  const auto& w = doc["warnings"];
  EXPECT_EQ(w.size(), 3u) << w.dump(1);
  EXPECT_EQ(count_containing(w, "0000:42:00.0 (gpu): PCIe link degraded: width x8 of x16"), 1);
  EXPECT_EQ(count_containing(w, "mlx5_5 port 1: state DOWN"), 1);
  EXPECT_EQ(count_containing(w, "GPU6 0000:c0:00.0: 1 of 18 NVLinks down (link 5)"), 1);
  EXPECT_EQ(count_containing(w, "0000:1a:00.0"), 0);  // power saving is not a problem
  EXPECT_EQ(count_containing(w, "mlx5_0"), 0);
  for (const auto& nd : doc["netdevs"]) {
    if (nd["name"] == "ib5") {
      EXPECT_TRUE(nd["speed_mbps"].is_null());
    }
    if (nd["name"] == "ib0") {
      EXPECT_EQ(nd["speed_mbps"], 400000);
    }
  }
}

TEST(WorkstationFixture, PcieOnlyMatrixAcsAndDowntrainedStorage) {
  auto doc = probe(fixture("workstation-4gpu"));
  ASSERT_EQ(doc["gpus"].size(), 4u);
  const auto& m = doc["gpu_matrix"];
  EXPECT_EQ(m[0][1], "PIX");
  EXPECT_EQ(m[0][2], "PHB");
  EXPECT_EQ(m[0][3], "NODE");
  EXPECT_EQ(doc["gpus"][0]["nvlinks_up"], 0);
  EXPECT_TRUE(doc["gpus"][0]["numa_node"].is_null());  // numa_node -1: unknown, not 0
  EXPECT_EQ((*pci(doc, "0000:02:08.0"))["acs"]["p2p_redirect"], true);
  EXPECT_EQ((*pci(doc, "0000:01:00.0"))["acs"]["p2p_redirect"], false);
  EXPECT_EQ((*pci(doc, "0000:42:00.0"))["link"]["degraded"], true);
  EXPECT_EQ((*pci(doc, "0000:21:00.0"))["link"]["power_saving"], true);
  const auto& w = doc["warnings"];
  EXPECT_EQ(w.size(), 3u) << w.dump(1);
  EXPECT_EQ(count_containing(w, "0000:02:08.0 (bridge): ACS P2P redirect"), 1);
  EXPECT_EQ(count_containing(w, "0000:02:10.0 (bridge): ACS P2P redirect"), 1);
  EXPECT_EQ(count_containing(w, "0000:00:03.1"), 0);  // a root port with one GPU below
  EXPECT_EQ(count_containing(w, "0000:42:00.0 (storage): PCIe link degraded: speed 8 of 16 GT/s"),
            1);
  EXPECT_EQ(doc["nics"].size(), 0u);
  EXPECT_EQ(doc["gdr"]["present"], false);
  EXPECT_TRUE(doc["gdr"]["module"].is_null());
}

TEST(WorkstationFixture, WithoutNvmlGpusComeFromPciClass) {
  std::string dir = temp_dir() + "/tree";
  fs::copy(fixture("workstation-4gpu"), dir,
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  std::ofstream(dir + "/" + kSnapshotFile)
      << R"({"host": "ws", "nvml": null, "nvml_status": "NVML not found"})";
  auto doc = probe(dir);
  ASSERT_EQ(doc["gpus"].size(), 4u);
  EXPECT_TRUE(doc["gpus"][0]["name"].is_null());
  EXPECT_TRUE(doc["gpus"][0]["nvlinks_up"].is_null());
  EXPECT_EQ(doc["gpus"][0]["source"], "pci");
  EXPECT_EQ(doc["gpu_matrix"][0][1], "PIX");
  EXPECT_EQ(count_containing(doc["warnings"], "NVML unavailable (NVML not found)"), 1);
  fs::remove_all(fs::path(dir).parent_path());
}

TEST(CiMachineCapture, VirtioDevicesHaveNoLinksAndNothingIsWrong) {
  auto doc = probe(fixture("ci-vm"));
  ASSERT_EQ(doc["numa_nodes"].size(), 1u);
  EXPECT_EQ(doc["numa_nodes"][0]["distances"], nlohmann::json({10}));
  EXPECT_EQ(doc["gpus"].size(), 0u);
  EXPECT_EQ(doc["nics"].size(), 0u);
  ASSERT_FALSE(doc["pci_devices"].empty());
  for (const auto& d : doc["pci_devices"]) {
    EXPECT_TRUE(d["link"].is_null()) << d["bdf"];
    EXPECT_TRUE(d["numa_node"].is_null()) << d["bdf"];
  }
  ASSERT_EQ(doc["netdevs"].size(), 1u);
  EXPECT_EQ(doc["netdevs"][0]["name"], "eth0");
  EXPECT_TRUE(doc["netdevs"][0]["speed_mbps"].is_null());
  EXPECT_EQ(doc["iommu_groups"].size(), 0u);
  EXPECT_EQ(doc["warnings"].size(), 0u);
}

// A device that can go faster than the port above it is capped, not degraded: one warning naming
// both ends, and no degraded flag on either.
TEST(WorkstationFixture, ADeviceFasterThanItsUpstreamPortIsCappedNotDegraded) {
  TempDir tmp;
  std::string dir = tmp / "tree";
  fs::copy(fixture("workstation-4gpu"), dir,
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  const std::string port = dir + "/devices/pci0000:40/0000:40:01.1";
  std::ofstream(port + "/max_link_speed", std::ios::trunc) << "8.0 GT/s PCIe\n";
  std::ofstream(port + "/current_link_speed", std::ios::trunc) << "8.0 GT/s PCIe\n";
  std::ofstream(port + "/0000:41:00.0/current_link_speed", std::ios::trunc) << "8.0 GT/s PCIe\n";
  auto doc = probe(dir);
  EXPECT_EQ(count_containing(doc["warnings"],
                             "0000:41:00.0 (gpu): capable of 16 GT/s but its upstream port "
                             "0000:40:01.1 tops out at 8 GT/s"),
            1)
      << doc["warnings"].dump(1);
  EXPECT_EQ(count_containing(doc["warnings"], "tops out"), 1) << doc["warnings"].dump(1);
  EXPECT_FALSE(pci(doc, "0000:41:00.0")->at("link")["degraded"].get<bool>());
  EXPECT_FALSE(pci(doc, "0000:41:00.0")->at("link")["power_saving"].get<bool>());
  EXPECT_FALSE(pci(doc, "0000:40:01.1")->at("link")["degraded"].get<bool>());
  EXPECT_EQ(count_containing(doc["warnings"], "0000:41:00.0 (gpu): PCIe link degraded"), 0);
  // The unchanged fixture has no capped device.
  EXPECT_EQ(count_containing(probe(fixture("workstation-4gpu"))["warnings"], "tops out"), 0);
}

TEST(Snapshot, CaptureReproducesTheDocumentWithRelativeLinks) {
  std::string dir = temp_dir() + "/snap";
  Sysfs sys(fixture("dgx-h100"));
  Topology topo = probe_topology(sys);
  capture_snapshot(sys, topo, dir);
  EXPECT_EQ(probe(dir), topology_to_json(topo));
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_symlink()) {
      EXPECT_TRUE(fs::read_symlink(e.path()).is_relative()) << e.path();
    }
  }
  EXPECT_THROW(capture_snapshot(sys, topo, dir), Error);  // never overwrites
  fs::remove_all(fs::path(dir).parent_path());
}

TEST(Snapshot, SymlinksNeverLeaveTheTree) {
  std::string dir = temp_dir();
  fs::create_directories(dir + "/a");
  std::ofstream(dir + "/a/file") << "inside\n";
  fs::create_symlink("../../../../../../etc", dir + "/a/escape");
  fs::create_symlink("/a", dir + "/absolute");
  fs::create_directories(dir + "/etc");
  std::ofstream(dir + "/etc/passwd") << "the tree's own\n";
  Sysfs sys(dir);
  EXPECT_EQ(sys.resolve("a/escape"), "etc");  // ".." stops at the root
  EXPECT_EQ(sys.read("a/escape/passwd"), "the tree's own");
  EXPECT_EQ(sys.read("absolute/file"), "inside");
  fs::remove_all(dir);
}

TEST(Summary, FingerprintFollowsHardwareNotHostNames) {
  auto dgx = host_topology_facts(fixture("dgx-h100"));
  auto ws = host_topology_facts(fixture("workstation-4gpu"));
  EXPECT_EQ(dgx["gpus"].size(), 8u);
  EXPECT_EQ(dgx["gpus"][0]["model"], "10de:2330");
  EXPECT_NE(dgx["fingerprint"], ws["fingerprint"]);
  auto renamed = dgx;
  renamed["host"] = "dgx-h100-node02";
  auto one = topology_summary({dgx.dump(), dgx.dump()});
  auto two = topology_summary({dgx.dump(), renamed.dump()});
  EXPECT_EQ(one["hosts"].size(), 1u);
  EXPECT_EQ(two["hosts"].size(), 2u);
  EXPECT_EQ(two["gpus_per_host"]["dgx-h100-node02"], 8);
  EXPECT_EQ(two["nics_per_host"]["dgx-h100-node01"], 8);
  auto mixed = topology_summary({dgx.dump(), ws.dump()});
  EXPECT_NE(two["fingerprint"], mixed["fingerprint"]);
  auto two_again = topology_summary({renamed.dump(), dgx.dump()});
  EXPECT_EQ(two["fingerprint"], two_again["fingerprint"]);
}

// Identical hardware under two host names: the facts are computed on each host (the host name
// read from the tree), and neither the host fingerprints nor the overall one may differ.
TEST(Summary, FingerprintIsTheSameOnIdenticalHostsWithDifferentNames) {
  TempDir tmp;
  std::vector<nlohmann::json> facts;
  for (const std::string host : {"node-a", "node-b"}) {
    std::string dir = tmp / host;
    fs::copy(fixture("workstation-4gpu"), dir,
             fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    std::ifstream in(dir + "/" + kSnapshotFile);
    auto snapshot = nlohmann::json::parse(in);
    in.close();
    snapshot["host"] = host;
    std::ofstream(dir + "/" + kSnapshotFile, std::ios::trunc) << snapshot.dump();
    facts.push_back(host_topology_facts(dir));
  }
  EXPECT_EQ(facts[0]["host"], "node-a");
  EXPECT_EQ(facts[1]["host"], "node-b");
  EXPECT_EQ(facts[0]["fingerprint"], facts[1]["fingerprint"]);
  auto two = topology_summary({facts[0].dump(), facts[1].dump()});
  EXPECT_EQ(two["hosts"].size(), 2u);
  EXPECT_EQ(two["host_fingerprints"]["node-a"], two["host_fingerprints"]["node-b"]);
  // The same two machines named differently.
  auto c = facts[0], d = facts[1];
  c["host"] = "node-c";
  d["host"] = "node-d";
  EXPECT_EQ(topology_summary({c.dump(), d.dump()})["fingerprint"], two["fingerprint"]);
}

}  // namespace
}  // namespace cb
