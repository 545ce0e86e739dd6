// `probe links` per HCA: the HCAs from sysfs, the transport's choice and refusals, one pass per
// HCA with the environment naming that HCA alone, and the passes' documents merged into the rails
// verdict (pure logic; the NCCL transport itself needs GPUs:
// tests/integration/test_links_nccl_gpu.py).
#include <gtest/gtest.h>

#include <string>

#include "common/error.hpp"
#include "probes/links_hcas.hpp"
#include "probes/links_nics.hpp"
#include "probes/links_passes.hpp"

namespace cb {
namespace {

using Strings = std::vector<std::string>;

std::string usage_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no usage error";
  return {};
}

TEST(LinksHcas, ActiveHcasOfTheDgxFixtureLeaveOutTheDownOne) {
  Sysfs sys(std::string(CB_TEST_DATA) + "/sysfs/dgx-h100");
  EXPECT_EQ(active_hcas(sys),
            (Strings{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4", "mlx5_6", "mlx5_7"}));
}

TEST(LinksHcas, NoInfinibandNoHcas) {
  Sysfs sys(std::string(CB_TEST_DATA) + "/sysfs/ci-vm");
  EXPECT_TRUE(active_hcas(sys).empty());
}

TEST(LinksPasses, OnePassPerHcaNamingThatHcaAloneExactly) {
  const Strings rails = {"mlx5_0", "mlx5_1", "mlx5_3"};
  const auto passes = plan_links_passes(LinksTransport::Nccl, rails, {"probe", "links"});
  ASSERT_EQ(passes.size(), 3u);
  for (std::size_t k = 0; k < passes.size(); ++k) {
    const LinksPass& p = passes[k];
    EXPECT_EQ(p.rail, static_cast<int>(k));
    EXPECT_EQ(p.nic, rails[k]);
    // '=' makes NCCL match the name exactly (a bare mlx5_1 would also take mlx5_10..19).
    EXPECT_EQ(p.env, (EnvList{{"NCCL_IB_HCA", "=" + rails[k]}, {"NCCL_IB_DISABLE", "0"}}));
    EXPECT_EQ(p.args, (Strings{"probe", "links", "--transport", "nccl", "--nics", rails[k]}));
  }
}

TEST(LinksPasses, TcpPassesPinNothingInTheEnvironment) {
  const auto passes = plan_links_passes(LinksTransport::Tcp, {"eth0", "eth1"}, {"probe", "links"});
  ASSERT_EQ(passes.size(), 2u);
  EXPECT_TRUE(passes[1].env.empty());
  EXPECT_EQ(passes[1].args, (Strings{"probe", "links", "--transport", "tcp", "--nics", "eth1"}));
}

TEST(LinksTransportChoice, DefaultsAndRefusals) {
  TransportFacts gpu{true, false, 8, ""};
  EXPECT_EQ(choose_links_transport("", false, gpu), LinksTransport::Control);
  // Under a launcher one process cannot switch HCAs: per NIC stays TCP unless asked.
  EXPECT_EQ(choose_links_transport("", true, gpu), LinksTransport::Tcp);
  TransportFacts relaunch{true, true, 8, ""};
  EXPECT_EQ(choose_links_transport("", true, relaunch), LinksTransport::Nccl);
  TransportFacts no_gpu{true, true, 0, ""};
  EXPECT_EQ(choose_links_transport("", true, no_gpu), LinksTransport::Tcp);
  TransportFacts no_build{false, true, 8, ""};
  EXPECT_EQ(choose_links_transport("", true, no_build), LinksTransport::Tcp);
  EXPECT_EQ(choose_links_transport("tcp", false, gpu), LinksTransport::Tcp);
  EXPECT_EQ(choose_links_transport("nccl", false, gpu), LinksTransport::Nccl);

  EXPECT_EQ(usage_message([&] { choose_links_transport("nccl", true, no_build); }),
            "--transport nccl: this commbench was built without CUDA, so it has no NCCL");
  TransportFacts rank_without_gpu{true, false, 0, "no CUDA device is visible"};
  EXPECT_EQ(usage_message([&] { choose_links_transport("nccl", true, rank_without_gpu); }),
            "--transport nccl: no CUDA device is visible");
  // A --launch parent may run where no GPU is: the ranks check theirs.
  TransportFacts parent_without_gpu{true, true, 0, "no CUDA device is visible"};
  EXPECT_EQ(choose_links_transport("nccl", true, parent_without_gpu), LinksTransport::Nccl);
  EXPECT_EQ(usage_message([&] { choose_links_transport("ib", true, gpu); }),
            "invalid --transport 'ib': expected tcp or nccl");
}

TEST(LinksRailsOfHcas, HostsWithDifferentHcaNamesAreSaidSo) {
  const std::vector<Strings> per_host = {
      {"mlx5_0", "mlx5_1"}, {"mlx5_0", "mlx5_1", "mlx5_8"}, {"mlx5_0"}};
  const Strings hosts = {"h1", "h2", "h3"};
  const RailKind hca{"HCA", "with an active port"};
  const Strings rails = choose_rails(per_host, hosts, {}, hca);
  EXPECT_EQ(rails, Strings{"mlx5_0"});
  EXPECT_EQ(nics_off_the_rails(per_host, hosts, rails),
            (Strings{"h1 mlx5_1", "h2 mlx5_1", "h2 mlx5_8"}));
  EXPECT_EQ(usage_message([&] { choose_rails(per_host, hosts, {"mlx5_1"}, hca); }),
            "--nics: host h3 has no HCA 'mlx5_1' with an active port (it has: mlx5_0)");
}

// One pass's document: every ordered pair of `hosts` hosts (one rank each), at 10 GB/s, or
// `slow` GB/s for pairs touching host `slow_host` (-1: none).
nlohmann::json pass_document(int hosts, int slow_host, double slow, double seconds) {
  nlohmann::json pairs = nlohmann::json::array();
  std::vector<std::string> names;
  for (int i = 0; i < hosts; ++i) names.push_back("h" + std::to_string(i + 1));
  for (int s = 0; s < hosts; ++s) {
    for (int d = 0; d < hosts; ++d) {
      if (s == d) continue;
      const bool hit = s == slow_host || d == slow_host;
      pairs.push_back({{"src_rank", s},
                       {"dst_rank", d},
                       {"src_host", names[s]},
                       {"dst_host", names[d]},
                       {"bandwidth_GBps", hit ? slow : 10.0},
                       {"latency_us", 3.0},
                       {"nic", "mlx5_0"},
                       {"rail", 0}});
    }
  }
  return {{"schema", "commbench/links/v2"},
          {"meta",
           {{"nranks", hosts},
            {"hosts", names},
            {"participants", std::vector<int>{0, 1, 2, 3}},
            {"rounds", hosts - 1},
            {"seconds", seconds},
            {"confirmations", 1}}},
          {"pairs", pairs}};
}

TEST(LinksPassMerge, PassesBecomeRailsAndTheVerdictNamesOneHostsHca) {
  LinksOptions o;
  o.min_fraction = 0.5;
  const Strings rails = {"mlx5_0", "mlx5_1"};
  const LinksResult r =
      merge_links_passes({pass_document(4, -1, 0, 2.0), pass_document(4, 2, 0.1, 3.0)}, rails, o);
  EXPECT_TRUE(r.fresh_processes);
  EXPECT_EQ(r.rails, rails);
  EXPECT_EQ(r.hosts, (Strings{"h1", "h2", "h3", "h4"}));
  EXPECT_EQ(r.rounds, 3);
  EXPECT_EQ(r.confirmations, 2);
  EXPECT_DOUBLE_EQ(r.seconds, 5.0);
  ASSERT_EQ(r.pairs.size(), 24u);
  // Each pass's pairs carry that pass's HCA and rail, whatever the pass's own document said.
  EXPECT_EQ(r.pairs.front().nic, "mlx5_0");
  EXPECT_EQ(r.pairs.back().nic, "mlx5_1");
  EXPECT_EQ(r.pairs.back().rail, 1);
  std::vector<const Straggler*> bw;
  for (const auto& s : r.verdict.stragglers)
    if (s.metric == "bandwidth" && s.component != "link") bw.push_back(&s);
  ASSERT_EQ(bw.size(), 1u);
  EXPECT_EQ(bw[0]->component, "nic");
  EXPECT_EQ(bw[0]->host, "h3");
  EXPECT_EQ(bw[0]->nic, "mlx5_1");
  EXPECT_EQ(bw[0]->rail, 1);
}

TEST(LinksPassMerge, APassWithoutADocumentIsAnError) {
  EXPECT_THROW(merge_links_passes({nlohmann::json::object()}, {"mlx5_0"}, LinksOptions{}), Error);
}

}  // namespace
}  // namespace cb
