// What NCCL chose: the TUNING-line parser on each release's format, the capture of NCCL's log
// into a private file (with the real libnccl, no GPU needed), and -A algorithm names.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "collectives/nccl/nccl_algorithms.hpp"
#include "collectives/nccl/tuning_capture.hpp"
#include "collectives/nccl/tuning_log.hpp"

namespace cb::nccl {
namespace {

TEST(TuningLog, Release2_20To2_22PrintsNumbersWithoutAFunction) {
  auto c = parse_tuning_line(
      "node1:4711:4711 [0] NCCL INFO 4194304 Bytes -> Algo 1 proto 2 time 1023.540039");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->function, "");
  EXPECT_EQ(c->bytes, 4194304u);
  EXPECT_EQ(c->algorithm, "RING");
  EXPECT_EQ(c->protocol, "SIMPLE");
  EXPECT_EQ(c->channels, -1);
  EXPECT_EQ(describe(*c), "RING/SIMPLE");
  auto tree = parse_tuning_line("h:1:1 [3] NCCL INFO 8 Bytes -> Algo 0 proto 0 time 6.400000");
  ASSERT_TRUE(tree);
  EXPECT_EQ(describe(*tree), "TREE/LL");
  auto nvls = parse_tuning_line("h:1:1 [3] NCCL INFO 65536 Bytes -> Algo 5 proto 1 time 9.5");
  ASSERT_TRUE(nvls);
  EXPECT_EQ(describe(*nvls), "NVLS_TREE/LL128");
}

TEST(TuningLog, Release2_23AddsTheFunction) {
  auto c = parse_tuning_line(
      "node1:4711:4711 [0] NCCL INFO AllGather: 1048576 Bytes -> Algo 6 proto 2 time 42.000000");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->function, "AllGather");
  EXPECT_EQ(c->bytes, 1048576u);
  EXPECT_EQ(describe(*c), "PAT/SIMPLE");
}

TEST(TuningLog, Release2_24OnPrintsNamesAndChannels) {
  auto c = parse_tuning_line(
      "node1:4711:4711 [0] NCCL INFO AllReduce: 4194304 Bytes -> Algo RING proto SIMPLE "
      "channel{Lo..Hi}={0..31}");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->function, "AllReduce");
  EXPECT_EQ(c->bytes, 4194304u);
  EXPECT_EQ(c->channels, 32);
  EXPECT_EQ(describe(*c), "RING/SIMPLE, 32 ch");
  // Later releases append the communicator or the CGA cluster size; a timestamp may lead.
  auto comm = parse_tuning_line(
      "[2025-05-01 10:00:00] h:1:2 [1] NCCL INFO ReduceScatter: 512 Bytes -> Algo COLLNET_DIRECT "
      "proto LL channel{Lo..Hi}={4..7} comm 0x55a7a339db50");
  ASSERT_TRUE(comm);
  EXPECT_EQ(describe(*comm), "COLLNET_DIRECT/LL, 4 ch");
  auto cga = parse_tuning_line(
      "h:1:2 [0] NCCL INFO Broadcast: 64 Bytes -> Algo RING proto LL128 channel{Lo..Hi}={0..0} "
      "cgaClusterSize 4");
  ASSERT_TRUE(cga);
  EXPECT_EQ(describe(*cga), "RING/LL128, 1 ch");
}

TEST(TuningLog, SymmetricKernelLine) {
  auto c = parse_tuning_line(
      "h:1:2 [0] NCCL INFO AllReduce [Symmetric]: 1048576 Bytes -> Kernel AllReduce_AGxLL_R "
      "nchannels 16 nthreads 512 nWorks 16");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->function, "AllReduce");
  EXPECT_EQ(c->bytes, 1048576u);
  EXPECT_EQ(c->kernel, "AllReduce_AGxLL_R");
  EXPECT_EQ(describe(*c), "symmetric kernel AllReduce_AGxLL_R, 16 ch");
}

TEST(TuningLog, OtherLinesAreNotChoices) {
  for (const char* line : {
           "h:1:1 [0] NCCL INFO Bootstrap: Using eth0:10.0.0.1<0>",
           "h:1:1 [0] NCCL INFO Channel 00/32 : 0 1",
           "h:1:1 [0] NCCL INFO AllReduce: opCount 5 sendbuff 0x7f recvbuff 0x7f count 1 "
           "datatype 7 op 0 root 0 comm 0x1 [nranks=2] stream 0x2",
           "h:1:1 [0] NCCL INFO  Algorithm   |             Tree    |            Ring   |",
           "h:1:1 [0] init.cc:2152 NCCL WARN Cuda failure 'CUDA driver version is insufficient'",
           "4194304 Bytes -> Algo 1 proto 2 time 1.0",  // not an NCCL log line
       }) {
    EXPECT_FALSE(parse_tuning_line(line)) << line;
  }
}

TEST(TuningLog, FindChoiceMatchesTheFunctionOrTheSize) {
  const std::vector<std::string> lines = {
      "h:1:1 [0] NCCL INFO Bootstrap: Using eth0:10.0.0.1<0>",
      "h:1:1 [0] NCCL INFO AllGather: 64 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}",
      "h:1:1 [0] NCCL INFO AllReduce: 64 Bytes -> Algo TREE proto LL channel{Lo..Hi}={0..3}",
  };
  auto ar = find_choice(lines, "AllReduce", {64});
  ASSERT_TRUE(ar);
  EXPECT_EQ(describe(*ar), "TREE/LL, 4 ch");
  EXPECT_FALSE(find_choice(lines, "Broadcast", {64}));
  // Before 2.23 there is no function name: the size decides (per rank, or times nranks).
  const std::vector<std::string> old = {
      "h:1:1 [0] NCCL INFO 256 Bytes -> Algo 1 proto 0 time 5.0",
      "h:1:1 [0] NCCL INFO 1024 Bytes -> Algo 0 proto 2 time 7.0",
  };
  auto g = find_choice(old, "AllGather", {256 / 4, 1024});
  ASSERT_TRUE(g);
  EXPECT_EQ(describe(*g), "TREE/SIMPLE");
}

TEST(TuningLog, OnlyTheFiveSelectedCollectivesPrintChoices) {
  EXPECT_EQ(tuning_function(Collective::AllReduce), "AllReduce");
  EXPECT_EQ(tuning_function(Collective::ReduceScatter), "ReduceScatter");
  EXPECT_EQ(tuning_function(Collective::Barrier), "AllReduce");
  EXPECT_EQ(tuning_function(Collective::AllToAll), "");
  EXPECT_EQ(tuning_function(Collective::SendRecv), "");
}

TEST(NcclAlgorithms, NamesFollowTheRelease) {
  auto v228 = algorithm_names(version_code(2, 28, 9));
  EXPECT_EQ(v228.size(), 21u);  // 7 algorithms x 3 protocols
  EXPECT_EQ(v228.front(), "tree/ll");
  EXPECT_NE(std::find(v228.begin(), v228.end(), "ring/ll128"), v228.end());
  EXPECT_NE(std::find(v228.begin(), v228.end(), "pat/simple"), v228.end());
  EXPECT_NE(std::find(v228.begin(), v228.end(), "nvlstree/ll"), v228.end());
  auto v217 = algorithm_names(version_code(2, 17, 1));
  EXPECT_NE(std::find(v217.begin(), v217.end(), "nvls/simple"), v217.end());
  EXPECT_EQ(std::find(v217.begin(), v217.end(), "nvlstree/simple"), v217.end());
  EXPECT_EQ(std::find(v217.begin(), v217.end(), "pat/simple"), v217.end());
  EXPECT_EQ(algorithm_names(version_code(2, 14, 3)).size(), 12u);
}

TEST(NcclAlgorithms, ParsingGivesTheEnvironmentValues) {
  auto f = parse_algorithm("ring/ll128");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->algo, "Ring");
  EXPECT_EQ(f->proto, "LL128");
  auto g = parse_algorithm("CollNetDirect/Simple");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->algo, "CollNetDirect");
  EXPECT_EQ(g->proto, "Simple");
  EXPECT_FALSE(parse_algorithm("ring"));
  EXPECT_FALSE(parse_algorithm("ring/"));
  EXPECT_FALSE(parse_algorithm("hypercube/ll"));
  EXPECT_FALSE(parse_algorithm("ring/ll256"));
  EXPECT_TRUE(has_algorithms(Collective::Broadcast));
  EXPECT_FALSE(has_algorithms(Collective::AllToAll));
  EXPECT_FALSE(has_algorithms(Collective::Barrier));
}

// The real library, no GPU: switching logging on around one call sends NCCL's lines to the
// private file, and the user's settings come back afterwards.
TEST(TuningCapture, PerCallCaptureWithTheInstalledLibrary) {
  LoadResult r = try_load("");
  if (!r.library) GTEST_SKIP() << r.error;
  const Library& lib = *r.library;
  if (!lib.fn.ResetDebugInit) GTEST_SKIP() << "NCCL " << lib.version.text() << " has no reset";
  ::unsetenv("NCCL_DEBUG_FILE");
  ::setenv("NCCL_DEBUG", "VERSION", 1);
  ::unsetenv("NCCL_DEBUG_SUBSYS");
  {
    TuningCapture capture(lib, true, "ALL");
    ASSERT_EQ(capture.mode(), TuningCapture::Mode::PerCall) << capture.why_off();
    // An invalid communicator request: NCCL warns (at any level up to INFO) and returns.
    auto lines = capture.capture([&] {
      Config config = make_config(lib.code(), true);
      UniqueId id{};
      Comm comm = nullptr;
      EXPECT_NE(lib.fn.CommInitRankConfig(&comm, 0, id, 0, &config), kSuccess);
    });
    ASSERT_FALSE(lines.empty());
    bool warned = false;
    for (const auto& l : lines) warned = warned || l.find("NCCL WARN") != std::string::npos;
    EXPECT_TRUE(warned);
    EXPECT_STREQ(std::getenv("NCCL_DEBUG"), "VERSION");  // the user's value is back
    EXPECT_EQ(std::getenv("NCCL_DEBUG_FILE"), nullptr);
    EXPECT_EQ(std::getenv("NCCL_DEBUG_SUBSYS"), nullptr);
    // A call that logs nothing leaves nothing stale behind.
    EXPECT_TRUE(capture.capture([] {}).empty());
    EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(capture.file()).parent_path()));
  }
  ::unsetenv("NCCL_DEBUG");
}

TEST(TuningCapture, TheUsersDebugFileIsLeftAlone) {
  LoadResult r = try_load("");
  if (!r.library) GTEST_SKIP() << r.error;
  ::setenv("NCCL_DEBUG_FILE", "/tmp/theirs.%h.%p", 1);
  TuningCapture capture(*r.library, true);
  ::unsetenv("NCCL_DEBUG_FILE");
  EXPECT_EQ(capture.mode(), TuningCapture::Mode::Off);
  EXPECT_NE(capture.why_off().find("NCCL_DEBUG_FILE"), std::string::npos);
  TuningCapture unwanted(*r.library, false);
  EXPECT_EQ(unwanted.mode(), TuningCapture::Mode::Off);
}

}  // namespace
}  // namespace cb::nccl
