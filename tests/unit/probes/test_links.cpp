// `probe links`: the tournament schedule (pure) and the straggler verdict (pure).
#include <gtest/gtest.h>

#include <set>

#include "probes/links_schedule.hpp"
#include "report/links/links_verdict.hpp"

namespace cb {
namespace {

// "h1" for 0, "h2" for 1, ...
std::string host(int i) {
  std::string h = "h";
  h += std::to_string(i + 1);
  return h;
}

// Every unordered pair at most once, every round disjoint; returns the pairs seen.
std::set<std::pair<int, int>> check_rounds(const std::vector<LinkRound>& rounds, int n) {
  std::set<std::pair<int, int>> seen;
  for (const auto& round : rounds) {
    std::set<int> busy;
    for (const auto& p : round) {
      EXPECT_LT(p.a, p.b);
      EXPECT_GE(p.a, 0);
      EXPECT_LT(p.b, n);
      EXPECT_TRUE(busy.insert(p.a).second) << p.a << " twice in one round";
      EXPECT_TRUE(busy.insert(p.b).second) << p.b << " twice in one round";
      EXPECT_TRUE(seen.insert({p.a, p.b}).second) << p.a << "-" << p.b << " twice";
    }
  }
  return seen;
}

TEST(LinksSchedule, EveryOrderedPairOnceAt1024) {
  const int n = 1024;
  auto rounds = tournament_rounds(n);
  ASSERT_EQ(rounds.size(), static_cast<std::size_t>(n - 1));
  for (const auto& r : rounds) EXPECT_EQ(r.size(), static_cast<std::size_t>(n / 2));
  auto seen = check_rounds(rounds, n);
  // Each unordered pair once, measured a -> b and b -> a: every ordered pair exactly once.
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(n) * (n - 1) / 2);
}

TEST(LinksSchedule, OddCountGivesEachOneBye) {
  for (int n : {3, 5, 7, 1023}) {
    auto rounds = tournament_rounds(n);
    ASSERT_EQ(rounds.size(), static_cast<std::size_t>(n)) << n;
    auto seen = check_rounds(rounds, n);
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(n) * (n - 1) / 2) << n;
    std::vector<int> byes(static_cast<std::size_t>(n), 0);
    for (const auto& r : rounds) {
      EXPECT_EQ(r.size(), static_cast<std::size_t>((n - 1) / 2));
      for (int p = 0; p < n; ++p)
        if (partner_in(r, p) < 0) ++byes[static_cast<std::size_t>(p)];
    }
    for (int b : byes) EXPECT_EQ(b, 1) << n;
  }
}

TEST(LinksSchedule, SmallCounts) {
  EXPECT_TRUE(tournament_rounds(1).empty());
  auto two = tournament_rounds(2);
  ASSERT_EQ(two.size(), 1u);
  ASSERT_EQ(two[0].size(), 1u);
  EXPECT_EQ(two[0][0].a, 0);
  EXPECT_EQ(two[0][0].b, 1);
}

TEST(LinksSchedule, SampledGivesKDistinctPartners) {
  const int n = 1000, k = 5;
  auto rounds = sampled_rounds(n, k, 42);
  ASSERT_EQ(rounds.size(), static_cast<std::size_t>(k));
  check_rounds(rounds, n);
  for (int p = 0; p < n; ++p) {
    std::set<int> partners;
    for (const auto& r : rounds)
      if (int q = partner_in(r, p); q >= 0) partners.insert(q);
    EXPECT_EQ(partners.size(), static_cast<std::size_t>(k)) << p;
  }
  // Same seed, same schedule (every rank computes it alone); another seed, other partners.
  auto again = sampled_rounds(n, k, 42);
  auto other = sampled_rounds(n, k, 43);
  EXPECT_EQ(partner_in(again[0], 0), partner_in(rounds[0], 0));
  int differ = 0;
  for (int p = 0; p < n; ++p) differ += partner_in(other[0], p) != partner_in(rounds[0], p);
  EXPECT_GT(differ, n / 2);
  EXPECT_EQ(sampled_rounds(6, 10, 1).size(), 5u);  // k beyond the tournament: all of it
}

// Ordered pairs between hosts h1..hN, one rank per host; `bw(i, j)` gives each figure.
std::vector<LinkSample> mesh(int n, const std::function<double(int, int)>& bw, double lat = 20) {
  std::vector<LinkSample> out;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (i != j)
        out.push_back({i, j, host(i), host(j), bw(i, j), lat, std::nullopt, std::nullopt});
  return out;
}

TEST(LinksVerdict, NamesTheSlowHostAmongThree) {
  // h2's link runs at a quarter: 4 of the 6 links touch it, so the median of all links is slow;
  // each host is judged against the links that do not touch it.
  auto pairs = mesh(3, [](int i, int j) { return i == 1 || j == 1 ? 0.2 : 0.8; });
  auto v = links_verdict(pairs, 0.8);
  ASSERT_EQ(v.stragglers.size(), 1u);
  EXPECT_EQ(v.stragglers[0].host, "h2");
  EXPECT_FALSE(v.stragglers[0].peer);
  EXPECT_EQ(v.stragglers[0].metric, "bandwidth");
  EXPECT_DOUBLE_EQ(v.stragglers[0].value, 0.2);
  EXPECT_DOUBLE_EQ(v.stragglers[0].median, 0.8);
  EXPECT_DOUBLE_EQ(v.stragglers[0].fraction, 0.25);
  ASSERT_EQ(v.hosts.size(), 3u);
  EXPECT_DOUBLE_EQ(*v.hosts[1].median_GBps, 0.2);
  EXPECT_DOUBLE_EQ(*v.hosts[0].min_GBps, 0.2);
  EXPECT_DOUBLE_EQ(*v.hosts[0].median_GBps, 0.5);
}

TEST(LinksVerdict, NamesTheSlowHostAmongEight) {
  auto pairs = mesh(8, [](int i, int j) { return i == 5 || j == 5 ? 1.0 : 4.0 + 0.1 * i; });
  auto v = links_verdict(pairs, 0.8);
  ASSERT_EQ(v.stragglers.size(), 1u);
  EXPECT_EQ(v.stragglers[0].host, "h6");
}

TEST(LinksVerdict, NamesASingleSlowLink) {
  auto pairs = mesh(4, [](int i, int j) { return i == 0 && j == 2 ? 1.0 : 4.0; });
  auto v = links_verdict(pairs, 0.8);
  ASSERT_EQ(v.stragglers.size(), 1u);
  EXPECT_EQ(v.stragglers[0].host, "h1");
  ASSERT_TRUE(v.stragglers[0].peer);
  EXPECT_EQ(*v.stragglers[0].peer, "h3");
  EXPECT_DOUBLE_EQ(v.stragglers[0].fraction, 0.25);
}

TEST(LinksVerdict, NoiseWithinTheFractionNamesNobody) {
  // +-10 % around the median is not a straggler at 0.8.
  auto pairs = mesh(5, [](int i, int j) { return 1.0 + 0.1 * (((i * 7 + j * 3) % 3) - 1); });
  EXPECT_TRUE(links_verdict(pairs, 0.8).stragglers.empty());
}

TEST(LinksVerdict, LatencyAboveTheMedianOverFraction) {
  auto pairs = mesh(4, [](int, int) { return 1.0; });
  for (auto& p : pairs)
    if (p.src_host == "h4" || p.dst_host == "h4") p.latency_us = 100;
  auto v = links_verdict(pairs, 0.8);
  ASSERT_EQ(v.stragglers.size(), 1u);
  EXPECT_EQ(v.stragglers[0].host, "h4");
  EXPECT_EQ(v.stragglers[0].metric, "latency");
  EXPECT_DOUBLE_EQ(v.stragglers[0].fraction, 0.2);
  EXPECT_DOUBLE_EQ(*v.hosts[3].median_latency_us, 100);
}

TEST(LinksVerdict, SeveralRanksPerHostAggregateAndSkipIntraHostPairs) {
  // Ranks 0,1 on a, 2,3 on b: the two a->b rank pairs give one link at their median; pairs
  // within a host (shared memory, far faster) take no part.
  std::vector<LinkSample> pairs = {{0, 2, "a", "b", 1.0, 10, {}, {}},
                                   {1, 3, "a", "b", 3.0, 30, {}, {}},
                                   {0, 1, "a", "a", 50.0, 1, {}, {}},
                                   {2, 0, "b", "a", 2.0, 20, {}, {}}};
  auto v = links_verdict(pairs, 0.8);
  ASSERT_EQ(v.links.size(), 2u);
  EXPECT_DOUBLE_EQ(*v.links[0].bandwidth_GBps, 2.0);
  EXPECT_DOUBLE_EQ(*v.links[0].latency_us, 20);
  EXPECT_TRUE(v.stragglers.empty());
}

// Per-NIC passes: hosts h1..hN, each pass a full mesh on its rail; `bw(rail, i, j)`.
std::vector<LinkSample> rails_mesh(int n, const std::function<double(int, int, int)>& bw) {
  std::vector<LinkSample> out;
  const char* nics[] = {"eth0", "eth1"};
  for (int r = 0; r < 2; ++r) {
    for (auto p : mesh(n, [&](int i, int j) { return bw(r, i, j); })) {
      p.nic = nics[r];
      p.rail = r;
      out.push_back(p);
    }
  }
  return out;
}

std::vector<Straggler> bandwidth_stragglers(const LinksVerdict& v) {
  std::vector<Straggler> out;
  for (const auto& s : v.stragglers)
    if (s.metric == "bandwidth") out.push_back(s);
  return out;
}

TEST(RailsVerdict, OneNicOfOneHostIsThatNic) {
  auto v = rails_verdict(
      rails_mesh(4, [](int r, int i, int j) { return r == 1 && (i == 1 || j == 1) ? 0.05 : 1.0; }),
      0.8);
  auto s = bandwidth_stragglers(v);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].component, "nic");
  EXPECT_EQ(s[0].host, "h2");
  EXPECT_EQ(s[0].nic, "eth1");
  EXPECT_EQ(s[0].rail, 1);
  EXPECT_DOUBLE_EQ(s[0].fraction, 0.05);
  EXPECT_EQ(straggler_name(s[0]), "h2 NIC eth1 (rail 1)");
  EXPECT_EQ(describe_straggler(s[0]).rfind("host h2 NIC eth1 (rail 1): bandwidth 0.05 GB/s is 0.05 "
                                           "of the rail's median 1 GB/s",
                                           0),
            0u)
      << describe_straggler(s[0]);
  EXPECT_EQ(v.hosts.size(), 8u);  // per host and rail
}

TEST(RailsVerdict, EveryNicOfOneHostIsTheHost) {
  auto v = rails_verdict(
      rails_mesh(4, [](int, int i, int j) { return i == 2 || j == 2 ? 0.05 : 1.0; }), 0.8);
  auto s = bandwidth_stragglers(v);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].component, "host");
  EXPECT_EQ(s[0].host, "h3");
  EXPECT_FALSE(s[0].nic);
  EXPECT_EQ(s[0].slow_rails, 2);
  EXPECT_NE(describe_straggler(s[0]).find("every one of its 2 NICs"), std::string::npos);
}

TEST(RailsVerdict, OneRailOnEveryHostIsTheRail) {
  auto v = rails_verdict(rails_mesh(4, [](int r, int, int) { return r == 1 ? 0.05 : 1.0; }), 0.8);
  auto s = bandwidth_stragglers(v);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].component, "rail");
  EXPECT_EQ(s[0].host, "");
  EXPECT_EQ(s[0].nic, "eth1");
  EXPECT_EQ(s[0].rail, 1);
  EXPECT_EQ(straggler_name(s[0]), "rail 1 (eth1)");
}

TEST(RailsVerdict, MostHostsSlowOnOneRailIsTheRail) {
  // 6 hosts, 4 of them slow on rail 0 only, among themselves and to others: the rail's median
  // link is slow too, and so is the verdict within it.
  auto v = rails_verdict(
      rails_mesh(6, [](int r, int i, int j) { return r == 0 && (i < 4 || j < 4) ? 0.1 : 1.0; }),
      0.8);
  auto s = bandwidth_stragglers(v);
  ASSERT_FALSE(s.empty());
  EXPECT_EQ(s[0].component, "rail");
  EXPECT_EQ(s[0].rail, 0);
}

TEST(RailsVerdict, HealthyRailsNameNothingAndPairsWithoutNicUseTheHostVerdict) {
  EXPECT_TRUE(
      rails_verdict(rails_mesh(4, [](int, int, int) { return 1.0; }), 0.8).stragglers.empty());
  auto plain = mesh(3, [](int i, int j) { return i == 1 || j == 1 ? 0.2 : 0.8; });
  EXPECT_FALSE(has_rails(plain));
  auto v = rails_verdict(plain, 0.8);
  ASSERT_EQ(v.stragglers.size(), 1u);
  EXPECT_EQ(v.stragglers[0].component, "host");
  EXPECT_EQ(describe_straggler(v.stragglers[0]),
            "host h2: bandwidth 0.2 GB/s is 0.25 of the median 0.8 GB/s (most of its links are "
            "slow)");
}

}  // namespace
}  // namespace cb
