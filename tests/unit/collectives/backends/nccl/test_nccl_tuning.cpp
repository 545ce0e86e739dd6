// What NCCL chose: the TUNING-line parser on each release's format, the capture of NCCL's log
// into a private file (with the real libnccl, no GPU needed), and -A algorithm names.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <thread>

#include <filesystem>
#include <fstream>

#include "collectives/backends/nccl/nccl_algorithms.hpp"
#include "collectives/backends/nccl/tuning_capture.hpp"
#include "collectives/backends/nccl/tuning_log.hpp"

extern "C" char** environ;

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

int environment_entries() {
  int n = 0;
  for (char** e = environ; *e; ++e) ++n;
  return n;
}

// Test doubles for releases around the 2.27 line: 2.26 exports ncclResetDebugInit, but its reset
// closes the log file outside NCCL's log lock, so only the whole-run capture is used there.
TEST(TuningCapture, PerCallOnlyFrom2_27) {
  ::unsetenv("NCCL_DEBUG_FILE");
  ::unsetenv("NCCL_DEBUG");
  LoadResult old = load_file(FAKE_NCCL_2_26, "test", ErrorKind::Usage);
  ASSERT_TRUE(old.library) << old.error;
  ASSERT_TRUE(old.library->fn.ResetDebugInit);
  {
    // Whole-run logging adds host time to every timed call: off unless asked for.
    TuningCapture capture(*old.library, true);
    EXPECT_EQ(capture.mode(), TuningCapture::Mode::Off);
    EXPECT_NE(capture.why_off().find("COMMBENCH_NCCL_WHOLE_RUN_LOG=1"), std::string::npos);
    EXPECT_EQ(std::getenv("NCCL_DEBUG"), nullptr);
  }
  {
    ::setenv("COMMBENCH_NCCL_WHOLE_RUN_LOG", "1", 1);
    TuningCapture capture(*old.library, true);
    ::unsetenv("COMMBENCH_NCCL_WHOLE_RUN_LOG");
    EXPECT_EQ(capture.mode(), TuningCapture::Mode::WholeRun);
  }
  for (const char* v : {"NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE"}) ::unsetenv(v);
  LoadResult current = load_file(FAKE_NCCL_FULL, "test", ErrorKind::Usage);
  ASSERT_TRUE(current.library) << current.error;
  TuningCapture capture(*current.library, true);
  EXPECT_EQ(capture.mode(), TuningCapture::Mode::PerCall);
}

// Per call, the debug variables change without adding or removing environment entries while
// NCCL's threads may read the environment: the entries exist from the capture's creation on.
TEST(TuningCapture, PerCallNeverAddsOrRemovesEnvironmentEntries) {
  for (const char* v : {"NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE"}) ::unsetenv(v);
  LoadResult r = load_file(FAKE_NCCL_FULL, "test", ErrorKind::Usage);
  ASSERT_TRUE(r.library) << r.error;
  TuningCapture capture(*r.library, true);
  ASSERT_EQ(capture.mode(), TuningCapture::Mode::PerCall);
  char** const array = environ;
  const int entries = environment_entries();
  capture.capture([&] {
    EXPECT_STREQ(std::getenv("NCCL_DEBUG"), "INFO");
    EXPECT_STREQ(std::getenv("NCCL_DEBUG_SUBSYS"), "TUNING");
    EXPECT_NE(std::getenv("NCCL_DEBUG_FILE"), nullptr);
    EXPECT_EQ(environment_entries(), entries);
    EXPECT_EQ(environ, array);
  });
  EXPECT_EQ(environment_entries(), entries);
  EXPECT_EQ(environ, array);
  EXPECT_EQ(std::getenv("NCCL_DEBUG"), nullptr);
  EXPECT_EQ(std::getenv("NCCL_DEBUG_FILE"), nullptr);
}

TEST(EnvSlot, ChangesAreStoresIntoOneEntry) {
  ::unsetenv("COMMBENCH_TEST_SLOT");
  EnvSlot slot("COMMBENCH_TEST_SLOT");
  EXPECT_FALSE(slot.original());
  const int entries = environment_entries();
  std::atomic<bool> stop{false};
  std::thread reader([&] {  // a concurrent getenv must never fault
    while (!stop) (void)std::getenv("COMMBENCH_TEST_SLOT");
  });
  for (int i = 0; i < 2000; ++i) {
    slot.set(std::to_string(i % 7));
    ASSERT_STREQ(std::getenv("COMMBENCH_TEST_SLOT"), std::to_string(i % 7).c_str());
    slot.clear();
    ASSERT_EQ(std::getenv("COMMBENCH_TEST_SLOT"), nullptr);
  }
  stop = true;
  reader.join();
  EXPECT_EQ(environment_entries(), entries);
  ::setenv("COMMBENCH_TEST_SLOT2", "theirs", 1);
  EnvSlot kept("COMMBENCH_TEST_SLOT2");
  kept.set("ours");
  EXPECT_STREQ(std::getenv("COMMBENCH_TEST_SLOT2"), "ours");
  kept.restore();
  EXPECT_STREQ(std::getenv("COMMBENCH_TEST_SLOT2"), "theirs");
  ::unsetenv("COMMBENCH_TEST_SLOT2");
}

// Whole run (2.20 to 2.26): lines of calls nobody asks about are dropped, so a forced
// algorithm's line cannot be read later as the default's choice. 2.20-2.22 lines carry no
// function name, only the byte count.
TEST(TuningCapture, WholeRunDrainsTheLogOnEveryCall) {
  for (const char* v : {"NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE"}) ::unsetenv(v);
  LoadResult r = load_file(FAKE_NCCL_2_22, "test", ErrorKind::Usage);
  ASSERT_TRUE(r.library) << r.error;
  ::setenv("COMMBENCH_NCCL_WHOLE_RUN_LOG", "1", 1);
  TuningCapture capture(*r.library, true);
  ::unsetenv("COMMBENCH_NCCL_WHOLE_RUN_LOG");
  ASSERT_EQ(capture.mode(), TuningCapture::Mode::WholeRun);
  EXPECT_STREQ(std::getenv("NCCL_DEBUG"), "INFO");  // set before any NCCL thread exists
  auto log = [&](const std::string& line) {
    std::ofstream(capture.file(), std::ios::app) << line << "\n";
  };
  // A forced communicator's allgather of 4096 bytes logs; nobody reads it.
  log("h:1:1 [0] NCCL INFO 4096 Bytes -> Algo 0 proto 0 time 3.000000");
  capture.discard();
  // The default allreduce of 4096 bytes then logs nothing of its own (rank 0 prints it, or the
  // line is not there yet): no stale choice may be reported.
  auto lines = capture.capture([] {});
  EXPECT_FALSE(find_choice(lines, "AllReduce", {4096}));
  log("h:1:1 [0] NCCL INFO 4096 Bytes -> Algo 1 proto 2 time 5.000000");
  lines = capture.capture([] {});
  auto choice = find_choice(lines, "AllReduce", {4096});
  ASSERT_TRUE(choice);
  EXPECT_EQ(describe(*choice), "RING/SIMPLE");
  for (const char* v : {"NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE"}) ::unsetenv(v);
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
