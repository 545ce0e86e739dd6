#include "probes/links_passes.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "common/schema.hpp"

namespace cb {

LinksTransport choose_links_transport(const std::string& requested, bool per_nic,
                                      const TransportFacts& facts) {
  if (requested.empty()) {
    if (!per_nic) return LinksTransport::Control;
    return facts.relaunch && facts.nccl_built && facts.visible_gpus > 0 ? LinksTransport::Nccl
                                                                        : LinksTransport::Tcp;
  }
  if (requested == "tcp") return LinksTransport::Tcp;
  if (requested != "nccl") usage_error("invalid --transport '{}': expected tcp or nccl", requested);
  if (!facts.nccl_built)
    usage_error("--transport nccl: this commbench was built without CUDA, so it has no NCCL");
  if (!facts.relaunch && !facts.no_gpu_reason.empty())
    usage_error("--transport nccl: {}", facts.no_gpu_reason);
  return LinksTransport::Nccl;
}

EnvList pass_environment(LinksTransport t, const std::string& nic) {
  if (t != LinksTransport::Nccl) return {};
  return {{"NCCL_IB_HCA", "=" + nic}, {"NCCL_IB_DISABLE", "0"}};
}

std::vector<LinksPass> plan_links_passes(LinksTransport t, const std::vector<std::string>& rails,
                                         const std::vector<std::string>& args) {
  std::vector<LinksPass> out;
  for (std::size_t k = 0; k < rails.size(); ++k) {
    LinksPass p{static_cast<int>(k), rails[k], pass_environment(t, rails[k]), args};
    p.args.insert(p.args.end(), {"--transport", transport_name(t), "--nics", rails[k]});
    out.push_back(std::move(p));
  }
  return out;
}

namespace {

std::vector<double> numbers(const nlohmann::json& p, const char* key) {
  std::vector<double> out;
  if (auto it = p.find(key); it != p.end() && it->is_array())
    for (const auto& x : *it)
      if (x.is_number()) out.push_back(x.get<double>());
  return out;
}

std::optional<double> number(const nlohmann::json& v) {
  return v.is_number() ? std::optional<double>(v.get<double>()) : std::nullopt;
}

}  // namespace

LinksResult merge_links_passes(const std::vector<nlohmann::json>& docs,
                               const std::vector<std::string>& rails, const LinksOptions& o) {
  LinksResult r;
  r.options = o;
  r.per_host = true;
  r.fresh_processes = true;
  r.rails = rails;
  for (std::size_t k = 0; k < docs.size() && k < rails.size(); ++k) {
    const nlohmann::json& d = docs[k];
    if (!d.is_object() || d.value("schema", "") != kLinksSchema || !d.contains("meta") ||
        !d["pairs"].is_array())
      runtime_error("the pass over {} wrote no {} document", rails[k], kLinksSchema);
    const nlohmann::json& meta = d["meta"];
    if (k == 0) {
      r.nranks = meta.value("nranks", 0);
      r.hosts = meta.value("hosts", std::vector<std::string>{});
      r.participants = meta.value("participants", std::vector<int>{});
      r.rounds = meta.value("rounds", 0);
    }
    r.confirmations += meta.value("confirmations", 0);
    r.seconds += meta.value("seconds", 0.0);
    for (const auto& p : d["pairs"]) {
      r.pairs.push_back({p.value("src_rank", 0), p.value("dst_rank", 0),
                         p.value("src_host", std::string()), p.value("dst_host", std::string()),
                         number(p["bandwidth_GBps"]), number(p["latency_us"]), rails[k],
                         static_cast<int>(k), numbers(p, "remeasured_GBps"),
                         numbers(p, "remeasured_latency_us")});
    }
  }
  std::sort(r.pairs.begin(), r.pairs.end(), [](const LinkSample& x, const LinkSample& y) {
    return std::tie(x.rail, x.src_rank, x.dst_rank) < std::tie(y.rail, y.src_rank, y.dst_rank);
  });
  r.verdict = rails_verdict(r.pairs, o.min_fraction);
  return r;
}

}  // namespace cb
