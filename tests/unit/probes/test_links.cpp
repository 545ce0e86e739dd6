// `probe links`: the tournament schedule (pure) and the straggler verdict (pure).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
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
        out.push_back({i, j, host(i), host(j), bw(i, j), lat, std::nullopt, std::nullopt, {}, {}});
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
  std::vector<LinkSample> pairs = {{0, 2, "a", "b", 1.0, 10, {}, {}, {}, {}},
                                   {1, 3, "a", "b", 3.0, 30, {}, {}, {}, {}},
                                   {0, 1, "a", "a", 50.0, 1, {}, {}, {}, {}},
                                   {2, 0, "b", "a", 2.0, 20, {}, {}, {}, {}}};
  auto v = links_verdict(pairs, 0.8);
  ASSERT_EQ(v.links.size(), 2u);
  EXPECT_DOUBLE_EQ(*v.links[0].bandwidth_GBps, 2.0);
  EXPECT_DOUBLE_EQ(*v.links[0].latency_us, 20);
  EXPECT_TRUE(v.stragglers.empty());
}

// The pairs measured again after the tournament, twice: `first(i, j)` and `second(i, j)` (the
// same when not given) for each pair they give a figure (NaN: not measured again).
void remeasure(std::vector<LinkSample>& pairs, const std::function<double(int, int)>& first,
               std::function<double(int, int)> second = nullptr) {
  if (!second) second = first;
  for (auto& p : pairs) {
    const double x = first(p.src_rank, p.dst_rank), y = second(p.src_rank, p.dst_rank);
    if (!std::isnan(x)) p.remeasured_GBps = {x, y};
  }
}

constexpr double kNot = std::numeric_limits<double>::quiet_NaN();

TEST(LinksConfirmation, HostSlowAgainAgainstOtherPeersIsNamed) {
  auto pairs = mesh(4, [](int i, int j) { return i == 1 || j == 1 ? 0.2 : 1.0; });
  // Measured again: h2 against the three others, and the healthy pairs beside it (0.9 to 1.0).
  remeasure(pairs, [](int i, int j) {
    return i == 1 || j == 1 ? 0.21 : (i == 0 && j == 3) || (i == 3 && j == 0) ? 0.9 : 1.0;
  });
  auto v = links_verdict(pairs, 0.8);
  ASSERT_EQ(v.stragglers.size(), 1u);
  EXPECT_TRUE(v.unconfirmed.empty());
  const Straggler& s = v.stragglers[0];
  EXPECT_EQ(s.host, "h2");
  EXPECT_DOUBLE_EQ(s.value, 0.2);  // the tournament's figure
  ASSERT_TRUE(s.remeasured && s.remeasured_median && s.noise_floor);
  EXPECT_DOUBLE_EQ(*s.remeasured, 0.21);
  // Healthy links measured again: h1<->h3 and h3<->h4 at 1.0, h1<->h4 at 0.9: median 1.0, the
  // lowest 0.9 of it.
  EXPECT_DOUBLE_EQ(*s.remeasured_median, 1.0);
  EXPECT_DOUBLE_EQ(*s.noise_floor, 0.9);
  EXPECT_EQ(describe_straggler(s),
            "host h2: bandwidth 0.21 GB/s measured again against other hosts, 0.21 of the healthy "
            "links' 1 GB/s and beyond the lowest of them (0.90 of it) (most of its links are "
            "slow); 0.2 GB/s in the tournament, 0.20 of the median 1 GB/s");
}

TEST(LinksConfirmation, HostFineWhenMeasuredAgainIsUnconfirmed) {
  // The healthy run: h3 at 0.45 of the median in the tournament, at par measured again.
  auto pairs = mesh(4, [](int i, int j) { return i == 2 || j == 2 ? 0.92 : 2.05; });
  remeasure(pairs, [](int i, int j) { return i == 2 || j == 2 ? 1.95 : 2.0; });
  auto v = links_verdict(pairs, 0.8);
  EXPECT_TRUE(v.stragglers.empty());
  ASSERT_EQ(v.unconfirmed.size(), 1u);
  EXPECT_EQ(v.unconfirmed[0].host, "h3");
  EXPECT_DOUBLE_EQ(*v.unconfirmed[0].remeasured, 1.95);
  EXPECT_EQ(describe_unconfirmed(v.unconfirmed[0]),
            "unconfirmed: host h3: bandwidth 0.92 GB/s in the tournament, 0.45 of the median "
            "2.05 GB/s (most of its links are slow), but 1.95 GB/s measured again against other "
            "hosts, 0.97 of the healthy links' 2 GB/s: not beyond the lowest of them (1.00 of it)");
}

TEST(LinksConfirmation, SlowAgainButWithinTheHealthyLinksNoiseIsUnconfirmed) {
  // Measured again twice, h2 is at 0.6 of the healthy median both times: under 0.8, but one
  // healthy link (h1 -> h3) measured 1.0 and 0.5 of it, 0.75 on average, so the noise between
  // healthy links reaches 0.75 below the median, and 0.6 is not as far again below that
  // (0.75 x 0.75 = 0.5625).
  auto pairs = mesh(4, [](int i, int j) { return i == 1 || j == 1 ? 0.3 : 1.0; });
  auto once_slow = [](int i, int j) { return i == 0 && j == 2 ? 0.5 : 1.0; };
  auto fine = [](int, int) { return 1.0; };
  auto h2_at = [](double x, auto healthy) {
    return [=](int i, int j) { return i == 1 || j == 1 ? x : healthy(i, j); };
  };
  remeasure(pairs, h2_at(0.6, fine), h2_at(0.6, once_slow));
  auto v = links_verdict(pairs, 0.8);
  EXPECT_TRUE(v.stragglers.empty());
  ASSERT_EQ(v.unconfirmed.size(), 1u);
  EXPECT_DOUBLE_EQ(*v.unconfirmed[0].noise_floor, 0.75);
  EXPECT_DOUBLE_EQ(*v.unconfirmed[0].remeasured_median, 1.0);  // the healthy links' best
  remeasure(pairs, h2_at(0.55, fine), h2_at(0.55, once_slow));
  EXPECT_EQ(links_verdict(pairs, 0.8).stragglers.size(), 1u);
  remeasure(pairs, h2_at(0.58, fine), h2_at(0.58, once_slow));
  EXPECT_TRUE(links_verdict(pairs, 0.8).stragglers.empty());
  // Slow in one measurement only, its best is at par: not confirmed.
  remeasure(pairs, h2_at(0.1, fine), h2_at(0.98, fine));
  v = links_verdict(pairs, 0.8);
  EXPECT_TRUE(v.stragglers.empty());
  EXPECT_EQ(v.unconfirmed.size(), 1u);
}

TEST(LinksConfirmation, SlowOnlyWhenMeasuredAgainIsNotNamed) {
  // The tournament finds every link at par; measured again, h2's are slow: the measurements
  // disagree, so nothing is named (nor listed: it was never a suspect).
  auto pairs = mesh(4, [](int, int) { return 1.0; });
  remeasure(pairs, [](int i, int j) { return i == 1 || j == 1 ? 0.012 : 1.0; });
  auto v = links_verdict(pairs, 0.8);
  EXPECT_TRUE(v.stragglers.empty());
  EXPECT_TRUE(v.unconfirmed.empty());
}

TEST(LinksConfirmation, LinkSlowAgainIsNamedAndOneFineAgainIsNot) {
  auto pairs = mesh(4, [](int i, int j) { return i == 0 && j == 2 ? 1.0 : 4.0; });
  remeasure(pairs, [](int i, int j) {
    return i == 0 && j == 2 ? 1.1 : (i == 1 && j == 3) ? 4.0 : kNot;
  });
  auto v = links_verdict(pairs, 0.8);
  ASSERT_EQ(v.stragglers.size(), 1u);
  EXPECT_EQ(v.stragglers[0].peer, "h3");
  EXPECT_DOUBLE_EQ(*v.stragglers[0].remeasured_fraction, 1.1 / 4.0);
  remeasure(pairs, [](int i, int j) { return i == 0 && j == 2 ? 3.9 : kNot; });
  v = links_verdict(pairs, 0.8);
  EXPECT_TRUE(v.stragglers.empty());
  EXPECT_EQ(v.unconfirmed.size(), 1u);
}

TEST(LinksConfirmation, NoHealthyLinkMeasuredAgainConfirmsNothing) {
  auto pairs = mesh(4, [](int i, int j) { return i == 1 || j == 1 ? 0.2 : 1.0; });
  remeasure(pairs, [](int i, int j) { return i == 1 || j == 1 ? 0.2 : kNot; });
  auto v = links_verdict(pairs, 0.8);
  EXPECT_TRUE(v.stragglers.empty());
  ASSERT_EQ(v.unconfirmed.size(), 1u);
  EXPECT_NE(describe_unconfirmed(v.unconfirmed[0]).find("with no healthy link beside it"),
            std::string::npos);
}

TEST(LinksConfirmation, PairsToMeasureAgainAreTheSuspectAgainstPeersAndHealthyPairs) {
  // Six hosts, 15 pairs: more than 8, so h2 (rank 1) against h1, h3 and h4, then healthy pairs
  // over distinct hosts first.
  auto pairs = mesh(6, [](int i, int j) { return i == 1 || j == 1 ? 0.2 : 1.0; });
  std::vector<std::string> rank_hosts = {"h1", "h2", "h3", "h4", "h5", "h6"};
  std::vector<int> ranks = {0, 1, 2, 3, 4, 5};
  auto suspects = links_verdict(pairs, 0.8);
  EXPECT_EQ(confirmation_pairs(suspects, ranks, rank_hosts),
            (std::vector<std::pair<int, int>>{{0, 1}, {1, 2}, {1, 3}, {0, 2}, {3, 4}, {2, 3}}));
  EXPECT_TRUE(confirmation_pairs(links_verdict(mesh(6, [](int, int) { return 1.0; }), 0.8), ranks,
                                 rank_hosts)
                  .empty());
  // At most `most` pairs, references kept.
  EXPECT_EQ(confirmation_pairs(suspects, ranks, rank_hosts, 3, 3, 4).size(), 4u);
  // Four hosts, 6 pairs: every one of them, suspects or not.
  auto all = confirmation_pairs(links_verdict(mesh(4, [](int, int) { return 1.0; }), 0.8),
                                {0, 1, 2, 3}, {"h1", "h2", "h3", "h4"});
  EXPECT_EQ(all,
            (std::vector<std::pair<int, int>>{{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}}));
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

TEST(LinksConfirmation, UnconfirmedNicKeepsItsRail) {
  auto pairs =
      rails_mesh(4, [](int r, int i, int j) { return r == 1 && (i == 1 || j == 1) ? 0.3 : 1.0; });
  for (auto& p : pairs) p.remeasured_GBps = {p.rail == 1 ? 0.98 : 1.0};
  auto v = rails_verdict(pairs, 0.8);
  EXPECT_TRUE(v.stragglers.empty());
  ASSERT_EQ(v.unconfirmed.size(), 1u);
  EXPECT_EQ(v.unconfirmed[0].component, "nic");
  EXPECT_EQ(v.unconfirmed[0].host, "h2");
  EXPECT_EQ(v.unconfirmed[0].nic, "eth1");
  EXPECT_EQ(v.unconfirmed[0].rail, 1);
}

TEST(LinksConfirmation, RailSlowOnlyInTheTournamentIsUnconfirmed) {
  // Rail 1 at a tenth in the tournament; measured again, every link of both rails at par.
  auto pairs = rails_mesh(4, [](int r, int, int) { return r == 1 ? 0.1 : 1.0; });
  for (auto& p : pairs) p.remeasured_GBps = {1.0, 0.9};
  auto v = rails_verdict(pairs, 0.8);
  EXPECT_TRUE(v.stragglers.empty());
  ASSERT_EQ(v.unconfirmed.size(), 1u);
  EXPECT_EQ(v.unconfirmed[0].component, "rail");
  EXPECT_EQ(describe_unconfirmed(v.unconfirmed[0]),
            "unconfirmed: rail 1 (eth1): bandwidth 0.1 GB/s in the tournament, 0.10 of the other "
            "rails' median 1 GB/s (the whole rail: its switch or cabling), but 1 GB/s measured "
            "again, 1.00 of the other rails' 1 GB/s: not beyond the lowest of them (0.95 of it)");
  // Slow again too: named.
  for (auto& p : pairs) p.remeasured_GBps = {p.rail == 1 ? 0.1 : 1.0};
  v = rails_verdict(pairs, 0.8);
  ASSERT_EQ(v.stragglers.size(), 1u);
  EXPECT_EQ(v.stragglers[0].component, "rail");
  EXPECT_DOUBLE_EQ(*v.stragglers[0].remeasured_fraction, 0.1);
}

}  // namespace
}  // namespace cb
