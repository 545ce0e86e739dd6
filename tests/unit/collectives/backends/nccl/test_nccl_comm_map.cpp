// The NCCL backend's communicator map and the labels of a forced algorithm's failure, driven
// without a GPU: the map by a fake communicator factory, the labels by result codes.
#include <gtest/gtest.h>

#include <set>

#include "collectives/backends/nccl/comm_map.hpp"
#include "collectives/backends/nccl/nccl_abi.hpp"
#include "collectives/backends/nccl/nccl_policy.hpp"
#include "common/error.hpp"

namespace cb::nccl {
namespace {

// Test double for NcclCommunicator: counts its closes; close() on a null one would crash.
struct FakeComm {
  std::string algorithm;
  int* closes;
  bool broken = false;
  void close() { ++*closes; }
  bool failed() const { return broken; }
};

struct FakeFactory {
  std::set<std::string> rejected;  // set-ups NCCL refuses
  int made = 0, closes = 0;
  std::function<std::shared_ptr<FakeComm>()> for_algorithm(const std::string& a) {
    return [this, a]() -> std::shared_ptr<FakeComm> {
      if (rejected.count(a)) return nullptr;
      ++made;
      return std::make_shared<FakeComm>(FakeComm{a, &closes});
    };
  }
};

TEST(CommMap, RejectedForcedSetUpLeavesNoEntryAndTheNextOneOpens) {
  FakeFactory nccl;
  nccl.rejected = {"collnetdirect/ll"};
  CommMap<FakeComm> map;
  ASSERT_TRUE(map.acquire("default", nccl.for_algorithm("default")));
  ASSERT_TRUE(map.acquire("ring/ll", nccl.for_algorithm("ring/ll")));
  EXPECT_FALSE(map.acquire("collnetdirect/ll", nccl.for_algorithm("collnetdirect/ll")));
  EXPECT_FALSE(map.holds("collnetdirect/ll"));
  EXPECT_EQ(nccl.closes, 1);  // ring/ll, before the refused set-up
  auto next = map.acquire("tree/simple", nccl.for_algorithm("tree/simple"));
  ASSERT_TRUE(next);
  EXPECT_EQ(next->algorithm, "tree/simple");
  EXPECT_EQ(map.size(), 2u);  // default and tree/simple
  EXPECT_EQ(nccl.closes, 1);
}

TEST(CommMap, FailedProbeDropsTheCommunicatorAndAFailedOneIsMadeAgain) {
  FakeFactory nccl;
  CommMap<FakeComm> map;
  ASSERT_TRUE(map.acquire("ring/ll", nccl.for_algorithm("ring/ll")));
  map.drop("ring/ll");  // its probe aborted it
  EXPECT_FALSE(map.holds("ring/ll"));
  ASSERT_TRUE(map.acquire("tree/ll", nccl.for_algorithm("tree/ll")));
  EXPECT_EQ(nccl.closes, 0);  // the dropped one is not closed again
  auto tree = map.acquire("tree/ll", nccl.for_algorithm("tree/ll"));
  EXPECT_EQ(nccl.made, 2);  // reused
  tree->broken = true;
  auto fresh = map.acquire("tree/ll", nccl.for_algorithm("tree/ll"));
  EXPECT_NE(fresh, tree);
  EXPECT_EQ(nccl.made, 3);
}

TEST(CommMap, DefaultCommunicatorStaysOpenAcrossForcedOnes) {
  FakeFactory nccl;
  CommMap<FakeComm> map;
  auto def = map.acquire("default", nccl.for_algorithm("default"));
  map.acquire("ring/ll", nccl.for_algorithm("ring/ll"));
  map.acquire("tree/ll", nccl.for_algorithm("tree/ll"));
  EXPECT_EQ(map.acquire("default", nccl.for_algorithm("default")), def);
  EXPECT_EQ(nccl.closes, 2);  // ring/ll when tree/ll opened, tree/ll when default was asked for
}

TEST(ForcedAlgorithmFailure, NcclRefusalsSkipTheCases) {
  EXPECT_EQ(rejection_or_fault(kInvalidUsage, "at communicator set-up", "ncclInvalidUsage"),
            "NCCL rejects it at communicator set-up: ncclInvalidUsage");
  EXPECT_EQ(rejection_or_fault(kInternalError, "", "allreduce float sum: x"),
            "NCCL rejects it: allreduce float sum: x");
}

TEST(ForcedAlgorithmFailure, CudaErrorDuringTheProbeIsAFaultNotARejection) {
  EXPECT_FALSE(is_rejection(kCudaFailure));
  try {
    rejection_or_fault(kCudaFailure, "",
                       "waiting for allreduce on GPU 0 failed: cudaErrorLaunchFailure");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runtime);
    const std::string what = e.what();
    EXPECT_EQ(what.find("NCCL"), std::string::npos) << what;
    EXPECT_NE(what.find("cudaErrorLaunchFailure"), std::string::npos) << what;
  }
  EXPECT_THROW(rejection_or_fault(kUnhandledCudaError, "", "x"), Error);
  EXPECT_THROW(rejection_or_fault(kRemoteError, "", "x"), Error);
}

}  // namespace
}  // namespace cb::nccl
