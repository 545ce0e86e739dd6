// The NVML loader against test-double libraries (fake_nvml.c): symbol binding, the _v3 PCI
// struct, bus id spelling, CPU masks and the NVLink loop's stopping rule.
#include <gtest/gtest.h>

#include <cstdlib>

#include "probes/nvml.hpp"

namespace cb {
namespace {

std::optional<NvmlFacts> load(const char* library, std::string& why) {
  setenv("COMMBENCH_NVML_LIBRARY", library, 1);
  auto facts = query_nvml(why);
  unsetenv("COMMBENCH_NVML_LIBRARY");
  return facts;
}

TEST(Nvml, ReadsGpusAndNvlinksFromTheLibrary) {
  std::string why;
  auto facts = load(FAKE_NVML_FULL, why);
  ASSERT_TRUE(facts) << why;
  EXPECT_EQ(facts->driver_version, "999.1");
  ASSERT_EQ(facts->gpus.size(), 2u);
  const NvmlGpu& g0 = facts->gpus[0];
  EXPECT_EQ(g0.bdf, "0000:1a:00.0");
  EXPECT_EQ(g0.name, "Fake GPU 0");
  EXPECT_EQ(g0.uuid, "GPU-fake-0");
  EXPECT_EQ(g0.cpu_affinity, "0-3,64");
  EXPECT_FALSE(g0.numa_node_id);  // NOT_SUPPORTED stays unknown
  EXPECT_EQ(g0.cc_major, 9);
  ASSERT_EQ(g0.nvlinks.size(), 4u);  // links 4-5 unsupported, 6 ends the loop
  EXPECT_FALSE(g0.nvlinks[2].active);
  EXPECT_EQ(g0.nvlinks[0].remote_bdf, "0000:1b:00.0");
  EXPECT_FALSE(g0.nvlinks[0].remote_is_switch);
  // Facts survive a snapshot's JSON.
  NvmlFacts back = nvml_facts_from_json(nvml_facts_to_json(*facts));
  EXPECT_EQ(nvml_facts_to_json(back), nvml_facts_to_json(*facts));
}

TEST(Nvml, MissingLibraryOrSymbolsAreReportedNotFatal) {
  std::string why;
  EXPECT_FALSE(load("/nonexistent/libnvidia-ml.so.1", why));
  EXPECT_NE(why.find("NVML not found"), std::string::npos);
  EXPECT_FALSE(load(FAKE_NVML_PARTIAL, why));
  EXPECT_NE(why.find("lacks"), std::string::npos);
}

}  // namespace
}  // namespace cb
