// The NCCL unique id exchange when rank 0's ncclGetUniqueId fails: three ranks as threads, each
// with the Gloo control channel the local launcher uses, and the fake NCCL library (whose
// ncclGetUniqueId fails) standing in for libnccl.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "collectives/backends/gloo/gloo_control.hpp"
#include "collectives/backends/nccl/nccl_library.hpp"
#include "collectives/backends/nccl/unique_id.hpp"
#include "temp_dir.hpp"

namespace cb::nccl {
namespace {

TEST(UniqueIdExchange, RankZerosFailureEndsEveryRankAtOnceWithItsMessage) {
  LoadResult fake = load_file(FAKE_NCCL_FULL, "test", ErrorKind::Usage);
  ASSERT_TRUE(fake.library) << fake.error;
  TempDir dir;
  constexpr int kRanks = 3;
  constexpr double kControlTimeoutS = 60;  // what the others would wait without the fix
  std::string messages[kRanks];
  double seconds[kRanks] = {};
  auto rank = [&](int r) {
    auto control = gloo_backend::make_file_store_control(dir.path(), r, kRanks, kControlTimeoutS);
    const auto start = std::chrono::steady_clock::now();
    try {
      exchange_unique_id(fake.library->fn, *control);
      messages[r] = "no error";
    } catch (const Error& e) {
      messages[r] = e.what();
    }
    seconds[r] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r) threads.emplace_back(rank, r);
  for (auto& t : threads) t.join();
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_NE(messages[r].find("ncclGetUniqueId failed on rank 0: ncclInternalError"),
              std::string::npos)
        << "rank " << r << ": " << messages[r];
    EXPECT_LT(seconds[r], 10.0) << "rank " << r;
  }
}

}  // namespace
}  // namespace cb::nccl
