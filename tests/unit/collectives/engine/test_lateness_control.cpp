// Lateness over a real control channel: four ranks as threads, each with the file-store Gloo
// control channel the local launcher uses (real TCP messages), one rank's clock read 5 ms ahead.
#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "collectives/backends/gloo/gloo_control.hpp"
#include "collectives/engine/clock_sync.hpp"
#include "collectives/engine/lateness.hpp"
#include "temp_dir.hpp"

namespace cb {
namespace {

constexpr int kRanks = 4;

// Runs `body(rank, control)` on every rank at once.
template <typename F>
void on_every_rank(F body) {
  TempDir dir;
  std::vector<std::thread> ranks;
  for (int r = 0; r < kRanks; ++r) {
    ranks.emplace_back([&, r] {
      auto control = gloo_backend::make_file_store_control(dir.path(), r, kRanks, 30);
      body(r, *control);
    });
  }
  for (auto& t : ranks) t.join();
}

TEST(ClockSyncControl, SkewedClockIsEstimatedWithinItsBoundAndSharedClocksAreExact) {
  // Ranks 0, 1 and 3 read one clock; rank 2 reads it 5000 us ahead (more than any call here),
  // so it is a clock of its own, estimated by ping-pong through rank 0 (its tree parent).
  std::vector<ClockOffset> got(kRanks);
  on_every_rank([&](int r, Control& control) {
    const double skew = r == 2 ? 5000 : 0;
    const std::string id = clock_identity() + (r == 2 ? " skewed" : "");
    ClockSync sync(control, control.allgather(id), skew);
    EXPECT_FALSE(sync.shared());
    got[static_cast<std::size_t>(r)] = sync.measure();
  });
  EXPECT_EQ(got[0].offset_us, 0);
  EXPECT_EQ(got[1].offset_us, 0);
  EXPECT_EQ(got[1].error_us, 0);
  EXPECT_EQ(got[3].offset_us, 0);
  EXPECT_GT(got[2].error_us, 0);
  EXPECT_LE(std::abs(got[2].offset_us - 5000), got[2].error_us) << got[2].error_us;
  EXPECT_LT(got[2].error_us, 5000);
}

TEST(ClockSyncControl, OneClockNeedsNoMessages) {
  on_every_rank([&](int, Control& control) {
    ClockSync sync(control, control.allgather(clock_identity()));
    EXPECT_TRUE(sync.shared());
    const ClockOffset o = sync.measure();
    EXPECT_EQ(o.offset_us, 0);
    EXPECT_EQ(o.error_us, 0);
  });
}

TEST(LatenessControl, OverTheControlChannelAsInOneProcess) {
  // Rank 2 enters every call 40 us after the others (who come straight back), the call takes
  // 10 us once all are in: the collective steps give what lateness_of gives.
  std::vector<Arrivals> arrivals(kRanks);
  for (int r = 0; r < kRanks; ++r) {
    for (int k = 0; k < 5; ++k) {
      const double start = 50.0 * k;
      const double entry = start + (r == 2 ? 40 : r);
      arrivals[static_cast<std::size_t>(r)].entry.push_back(entry);
      arrivals[static_cast<std::size_t>(r)].exit.push_back(start + 50);
      arrivals[static_cast<std::size_t>(r)].next.push_back(start + 50 + (r == 2 ? 40 : r));
    }
  }
  const auto want = lateness_of(arrivals, {0, 1, 2, 3}, -1, WaitPattern::Everyone, {0, 0, 0, 0});
  std::vector<std::vector<RankLateness>> got(kRanks);
  on_every_rank([&](int r, Control& control) {
    got[static_cast<std::size_t>(r)] = measure_lateness(
        control, r, arrivals[static_cast<std::size_t>(r)], WaitPattern::Everyone, false, 0);
  });
  for (const auto& g : got) EXPECT_EQ(g, want);
  EXPECT_EQ(want[2].last_calls, 5u);
  EXPECT_DOUBLE_EQ(want[2].caused_us, 5 * (40 + 39 + 37));
}

}  // namespace
}  // namespace cb
