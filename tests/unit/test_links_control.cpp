// `probe links` over the run's control channel: two ranks as threads, each with the file-store
// Gloo control channel the local launcher uses, exchanging real TCP messages.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <thread>

#include "collectives/backends/gloo/gloo_control.hpp"
#include "probes/links.hpp"
#include "temp_dir.hpp"

namespace cb {
namespace {

TEST(ControlPointToPoint, WindowOfMessagesArrivesInOrder) {
  TempDir dir;
  std::vector<int> received(4, -1);
  auto rank = [&](int r) {
    auto control = gloo_backend::make_file_store_control(dir.path(), r, 2, 30);
    std::vector<int> data = {r + 10, r + 11, r + 12, r + 13};
    if (r == 0) {
      control->send(1, data.data(), data.size() * sizeof(int), 3);
      control->recv(1, received.data(), sizeof(int));
    } else {
      std::vector<int> in(4, 0);
      control->recv(0, in.data(), in.size() * sizeof(int), 3);
      EXPECT_EQ(in, (std::vector<int>{10, 11, 12, 13}));
      control->send(0, data.data(), sizeof(int));
    }
  };
  std::thread a(rank, 0), b(rank, 1);
  a.join();
  b.join();
  EXPECT_EQ(received[0], 11);
}

TEST(LinksProbe, MeasuresEveryPairOverTheGlooControlChannel) {
  TempDir dir;
  LinksOptions o;
  o.bytes = 64 << 10;
  o.window = 4;
  o.repeats = 3;
  o.latency_iters = 20;
  LinksResult results[2];
  auto rank = [&](int r) {
    auto control = gloo_backend::make_file_store_control(dir.path(), r, 2, 30);
    results[r] = measure_links(o, *control);
  };
  std::thread a(rank, 0), b(rank, 1);
  a.join();
  b.join();
  for (const auto& r : results) {
    ASSERT_EQ(r.nranks, 2);
    EXPECT_EQ(r.hosts.size(), 2u);
    EXPECT_EQ(r.rounds, 1);
    ASSERT_EQ(r.pairs.size(), 2u);  // 0 -> 1 and 1 -> 0
    EXPECT_EQ(r.pairs[0].src_rank, 0);
    EXPECT_EQ(r.pairs[1].src_rank, 1);
    for (const auto& p : r.pairs) {
      ASSERT_TRUE(p.bandwidth_GBps && p.latency_us);
      EXPECT_GT(*p.bandwidth_GBps, 0);
      EXPECT_GT(*p.latency_us, 0);
    }
    EXPECT_EQ(*r.pairs[0].latency_us, *r.pairs[1].latency_us);
  }
}

}  // namespace
}  // namespace cb
