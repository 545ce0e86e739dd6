// Topology across hosts: fingerprints, groups and differences (report/cluster_topology), and
// `check` on a cluster-topology document (per host, identical_hosts) and on a links/v2 document.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "common/error.hpp"
#include "report/check/check.hpp"
#include "report/cluster_topology.hpp"
#include "report/links/links_verdict.hpp"
#include "report_fixtures.hpp"

namespace cb {
namespace {

// "h1" for 0, "h2" for 1, ...
std::string host(int i) {
  std::string h = "h";
  h += std::to_string(i + 1);
  return h;
}

using nlohmann::json;
using test::result_fixture;

json fixture(const char* name) {
  std::ifstream in(result_fixture(name));
  return json::parse(in);
}

json as_host(json t, const std::string& host) {
  t["host"] = host;
  return t;
}

// h1, h3 healthy DGX H100s, h2 the degraded one (a link at x8, another at 16 GT/s, fewer
// NVLinks, an IB port down, no GPUDirect RDMA module).
json three_hosts() {
  json good = fixture("topology-dgx-h100.json"), bad = fixture("topology-dgx-h100-degraded.json");
  return cluster_topology({as_host(good, "h1"), as_host(bad, "h2"), as_host(good, "h3")});
}

TEST(ClusterTopology, FingerprintIgnoresHostNameWarningsAndMemory) {
  json a = fixture("topology-dgx-h100.json");
  json b = as_host(a, "other");
  b["warnings"].push_back("something");
  b["numa_nodes"][0]["memory_bytes"] = 1;
  EXPECT_EQ(topology_fingerprint(a), topology_fingerprint(b));
  b["gpus"][0]["nvlinks_up"] = 17;
  EXPECT_NE(topology_fingerprint(a), topology_fingerprint(b));
  EXPECT_EQ(topology_fingerprint(a).size(), 16u);
}

TEST(ClusterTopology, ShapeNamesElementsByTheirIdentity) {
  auto shape = topology_shape(fixture("topology-dgx-h100.json"));
  EXPECT_EQ(shape.at("pci_devices[0000:18:00.0].link.max_gts"), 32.0);
  EXPECT_EQ(shape.at("nics[0000:19:00.0].ports[1].state"), "ACTIVE");
  EXPECT_EQ(shape.at("gpus[0000:18:00.0].nvlinks_up"), 18);
  EXPECT_EQ(shape.count("host"), 0u);
}

TEST(ClusterTopology, GroupsTheMajorityAndListsTheOddHostsDifferences) {
  json doc = three_hosts();
  EXPECT_EQ(doc["schema"], kClusterTopologySchema);
  ASSERT_EQ(doc["hosts"].size(), 3u);
  EXPECT_EQ(doc["hosts"][1]["topology"]["host"], "h2");
  ASSERT_EQ(doc["groups"].size(), 2u);
  EXPECT_EQ(doc["groups"][0]["hosts"], json({"h1", "h3"}));
  EXPECT_EQ(doc["groups"][1]["hosts"], json({"h2"}));
  bool link = false, nic = false, gdr = false;
  for (const auto& d : doc["differences"]) {
    EXPECT_EQ(d["host"], "h2");
    if (d["field"] == "gdr.present") gdr = d["value"] == false && d["majority"] == true;
    if (d["field"] == "nics[0000:aa:00.0].ports[1].state") nic = d["value"] == "DOWN";
    if (d["field"] == "pci_devices[0000:9a:00.0].link.current_width")
      link = d["value"] == 8 && d["majority"] == 16;
  }
  EXPECT_TRUE(link && nic && gdr) << doc["differences"].dump(1);
  std::ostringstream text;
  print_cluster_topology(doc, text);
  EXPECT_NE(text.str().find("3 hosts, 2 distinct shapes"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("h1,h3"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("gdr.present"), std::string::npos) << text.str();
}

// A host with another driver or NCCL differs by name: the kernel module's version and the
// libraries `topo` found (the `version` lines) are part of a host's shape.
TEST(ClusterTopology, DriverAndLibraryVersionsAreDifferences) {
  json a = fixture("topology-dgx-h100.json");
  a["nvidia_driver"] = "550.90.07";
  a["libraries"] = {{"NCCL", "2.21.5 (/usr/lib/libnccl.so.2)"}, {"MPI", "Open MPI 4.1.6"}};
  json b = a;
  b["nvidia_driver"] = "535.183.01";
  b["libraries"]["NCCL"] = "2.18.3 (/usr/lib/libnccl.so.2)";
  json doc = cluster_topology({as_host(a, "h1"), as_host(b, "h2"), as_host(a, "h3")});
  std::map<std::string, std::pair<json, json>> diffs;
  for (const auto& d : doc["differences"]) {
    EXPECT_EQ(d["host"], "h2");
    diffs[d["field"].get<std::string>()] = {d["value"], d["majority"]};
  }
  ASSERT_EQ(diffs.size(), 2u) << doc["differences"].dump();
  EXPECT_EQ(diffs.at("nvidia_driver").first, "535.183.01");
  EXPECT_EQ(diffs.at("nvidia_driver").second, "550.90.07");
  EXPECT_EQ(diffs.at("libraries.NCCL").first, "2.18.3 (/usr/lib/libnccl.so.2)");
}

TEST(ClusterTopology, IdenticalHostsHaveOneGroupAndNoDifferences) {
  json good = fixture("topology-dgx-h100.json");
  json doc = cluster_topology({as_host(good, "a"), as_host(good, "b")});
  EXPECT_EQ(doc["groups"].size(), 1u);
  EXPECT_TRUE(doc["differences"].empty());
}

CheckReport check(const std::string& spec, const json& topo, const json& links = nullptr) {
  return evaluate_spec(parse_spec(spec, "spec.toml"), {}, topo, "fixture", links, "links.json");
}

TEST(CheckCluster, TopologyRequirementsHoldPerHostAndNameTheFailingHost) {
  json doc = three_hosts();
  validate_topology(doc, "doc");
  CheckReport r = check("[[topology]]\npcie_min_width = 16\ngdr = true\n", doc);
  ASSERT_EQ(r.items.size(), 1u);
  const auto& i = r.items[0];
  EXPECT_FALSE(i.passed);
  EXPECT_EQ(i.measured.rfind("h2: ", 0), 0u) << i.measured;
  EXPECT_EQ(i.measured.find("h1"), std::string::npos) << i.measured;
  ASSERT_FALSE(i.details.empty());
  for (const auto& d : i.details) EXPECT_EQ(d.rfind("h2: ", 0), 0u) << d;

  json good = fixture("topology-dgx-h100.json");
  CheckReport ok = check("[[topology]]\npcie_min_width = 16\n",
                         cluster_topology({as_host(good, "a"), as_host(good, "b")}));
  EXPECT_TRUE(ok.items[0].passed) << ok.items[0].measured;
  EXPECT_NE(ok.items[0].measured.find("each of 2 hosts"), std::string::npos);
}

TEST(CheckCluster, IdenticalHostsFailsNamingTheOddHost) {
  CheckReport r = check("[[topology]]\nidentical_hosts = true\n", three_hosts());
  const auto& i = r.items[0];
  EXPECT_FALSE(i.passed);
  EXPECT_NE(i.measured.find("1 of 3 hosts differ: h2"), std::string::npos) << i.measured;
  ASSERT_FALSE(i.details.empty());
  EXPECT_EQ(i.details[0].rfind("h2: ", 0), 0u) << i.details[0];
  // One host's own document is trivially identical to itself.
  EXPECT_TRUE(
      check("[[topology]]\nidentical_hosts = true\n", fixture("topology-ci.json")).items[0].passed);
}

TEST(CheckCluster, ClusterDocumentsAreValidated) {
  EXPECT_THROW(validate_topology(json{{"schema", kClusterTopologySchema}}, "x"), Error);
  json doc = three_hosts();
  doc["hosts"][0]["topology"]["gpus"] = 3;
  EXPECT_THROW(validate_topology(doc, "x"), Error);
}

json links_doc(double slow_h2) {
  json pairs = json::array();
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      if (i == j) continue;
      double bw = i == 1 || j == 1 ? slow_h2 : 0.8;
      pairs.push_back({{"src_rank", i},
                       {"dst_rank", j},
                       {"src_host", host(i)},
                       {"dst_host", host(j)},
                       {"bandwidth_GBps", bw},
                       {"latency_us", 30.0}});
    }
  }
  return {{"schema", kLinksSchema}, {"pairs", pairs}};
}

TEST(CheckLinks, StragglerFailsNamingTheHost) {
  const std::string spec = "[[links]]\nlinks_min_fraction_of_median = 0.8\n";
  CheckReport bad = check(spec, nullptr, links_doc(0.2));
  ASSERT_EQ(bad.items.size(), 1u);
  EXPECT_FALSE(bad.items[0].passed);
  EXPECT_EQ(bad.items[0].kind, "links");
  EXPECT_EQ(bad.items[0].measured, "straggler: h2") << bad.items[0].measured;
  EXPECT_EQ(bad.links_source, "links.json");
  EXPECT_TRUE(check(spec, nullptr, links_doc(0.75)).items[0].passed);
}

TEST(CheckLinks, AbsoluteFloorsNameTheLinks) {
  CheckReport r = check("[[links]]\nlinks_min_GBps = 0.5\nlinks_max_latency_us = 100\n", nullptr,
                        links_doc(0.2));
  EXPECT_FALSE(r.items[0].passed);
  EXPECT_NE(r.items[0].measured.find("h1 -> h2"), std::string::npos) << r.items[0].measured;
  EXPECT_EQ(r.items[0].measured.find("h1 -> h3"), std::string::npos) << r.items[0].measured;
  EXPECT_NE(r.items[0].measured.find("worst link 30 us"), std::string::npos) << r.items[0].measured;
  EXPECT_THROW(check("[[links]]\nlinks_min_GBps = 1\n", nullptr, json{{"schema", "x"}}), Error);
  EXPECT_THROW(parse_spec("[[links]]\nlinks_min_fraction_of_median = 2\n", "s.toml"), Error);
  EXPECT_THROW(parse_spec("[[links]]\nname = \"x\"\n", "s.toml"), Error);
  EXPECT_THROW(parse_spec("[[links]]\nlinks_min_GBps = 1\nbogus = 1\n", "s.toml"), Error);
}

}  // namespace
}  // namespace cb
