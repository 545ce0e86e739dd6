// `probe links` over the run's control channel: two ranks as threads, each with the file-store
// Gloo control channel the local launcher uses, exchanging real TCP messages.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "collectives/backends/gloo/gloo_control.hpp"
#include "probes/links.hpp"
#include "probes/links_tcp.hpp"
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

// Test double for a slow link: the real Gloo control channel, whose point-to-point sends first
// sleep for as long as their bytes would take at `bytes_per_second` (no tc on loopback here).
class SlowLinkControl : public Control {
 public:
  SlowLinkControl(std::unique_ptr<Control> inner, double bytes_per_second)
      : inner_(std::move(inner)), rate_(bytes_per_second) {}
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  void barrier() override { inner_->barrier(); }
  void quiet_barrier() override { inner_->quiet_barrier(); }
  void max(double* v, std::size_t n) override { inner_->max(v, n); }
  void sum(std::uint64_t* v, std::size_t n) override { inner_->sum(v, n); }
  std::vector<std::string> allgather(const std::string& mine) override {
    return inner_->allgather(mine);
  }
  void send(int peer, const void* data, std::size_t bytes, int count) override {
    std::this_thread::sleep_for(std::chrono::duration<double>(bytes * count / rate_));
    inner_->send(peer, data, bytes, count);
  }
  void recv(int peer, void* data, std::size_t bytes, int count) override {
    inner_->recv(peer, data, bytes, count);
  }

 private:
  std::unique_ptr<Control> inner_;
  double rate_;
};

TEST(LinksProbe, ASlowLinkIsMeasuredWithinTheSampleTime) {
  // Defaults: 16 x 4 MiB per sample, 6 samples per direction. At 20 MB/s one sample would send
  // for 3.4 s and the probe for over 40 s; each sample stops at the sample time instead, and
  // its figure is what it moved by then.
  TempDir dir;
  LinksOptions o;
  o.latency_iters = 20;
  const double rate = 20e6;
  LinksResult results[2];
  auto rank = [&](int r) {
    SlowLinkControl control(gloo_backend::make_file_store_control(dir.path(), r, 2, 60), rate);
    results[r] = measure_links(o, control);
  };
  std::thread a(rank, 0), b(rank, 1);
  a.join();
  b.join();
  const double bound = links_time_bound(o, 1, 0, 0);
  EXPECT_DOUBLE_EQ(bound, 3 * 6 * 0.05);
  for (const auto& r : results) {
    // The bound, plus one batch past it per sample and the barriers; 40 s unbounded.
    EXPECT_LT(r.seconds, 3 * bound) << "bound " << bound;
    ASSERT_EQ(r.pairs.size(), 2u);
    for (const auto& p : r.pairs) {
      ASSERT_TRUE(p.bandwidth_GBps);
      EXPECT_GT(*p.bandwidth_GBps, 0.25 * rate / 1e9);
      EXPECT_LT(*p.bandwidth_GBps, 1.25 * rate / 1e9);
    }
  }
}

TEST(LinksTcp, BytesAcknowledgedOverTcpFromTheNicsAddress) {
  // Loopback as the NIC: each rank listens on 127.0.0.1, dials from it, and streams for at most
  // the sample time.
  TempDir dir;
  SampleLimits l;
  l.bytes = 1 << 20;
  l.window = 4;
  l.samples = 3;
  l.seconds = 0.05;
  l.latency_iters = 50;
  double bw[2] = {}, us[2] = {}, took[2] = {};
  auto rank = [&](int r) {
    auto control = gloo_backend::make_file_store_control(dir.path(), r, 2, 30);
    auto link = tcp_transport(*control, "lo", "127.0.0.1", true);
    const auto t0 = std::chrono::steady_clock::now();
    bw[r] = link->bandwidth(r, 0, 1, l);
    control->barrier();
    us[r] = link->latency(r, 0, 1, l);
    took[r] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  std::thread a(rank, 0), b(rank, 1);
  a.join();
  b.join();
  EXPECT_GT(bw[0], 0.01);  // loopback moves GB/s; 0 would mean nothing was acknowledged
  EXPECT_EQ(bw[1], 0);
  EXPECT_GT(us[0], 0);
  EXPECT_LT(us[0], 10000);
  EXPECT_LT(took[0], 2 * phase_bound_seconds(l) + 1.0);
}

TEST(LinksProbe, PerNicPassesNeedRanksOnSeveralHosts) {
  TempDir dir;
  LinksOptions o;
  o.nics = {"lo"};
  std::string errors[2];
  auto rank = [&](int r) {
    auto control = gloo_backend::make_file_store_control(dir.path(), r, 2, 30);
    try {
      measure_links(o, *control);
    } catch (const std::exception& e) {
      errors[r] = e.what();
    }
  };
  std::thread a(rank, 0), b(rank, 1);
  a.join();
  b.join();
  // Both threads share one host name: a NIC belongs to a host, and there is only one.
  EXPECT_NE(errors[0].find("needs ranks on at least 2 hosts"), std::string::npos) << errors[0];
}

}  // namespace
}  // namespace cb
