#include "report/check/topology_facts.hpp"

#include <fmt/format.h>

#include <map>

#include "common/error.hpp"
#include "common/schema.hpp"

namespace cb {

namespace {

using nlohmann::json;

const json& array_of(const json& doc, const char* key) {
  static const json kEmpty = json::array();
  auto it = doc.find(key);
  return it != doc.end() && it->is_array() ? *it : kEmpty;
}

std::optional<double> number_at(const json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string string_at(const json& j, const char* key) {
  if (!j.is_object()) return {};
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string gpu_label(const json& g) {
  return fmt::format("GPU {} ({})", g.contains("index") ? g["index"].dump() : "?",
                     string_at(g, "bdf"));
}

std::vector<LinkDeviceFacts> link_devices(const json& doc) {
  std::map<std::string, const json*> by_bdf;
  for (const auto& d : array_of(doc, "pci_devices")) {
    if (!string_at(d, "bdf").empty()) by_bdf[string_at(d, "bdf")] = &d;
  }
  auto link_of = [&](const std::string& bdf) -> std::optional<PcieLinkFacts> {
    auto it = by_bdf.find(bdf);
    if (it == by_bdf.end()) return std::nullopt;
    auto l = it->second->find("link");
    if (l == it->second->end() || !l->is_object()) return std::nullopt;
    return PcieLinkFacts{number_at(*l, "current_gts"), number_at(*l, "max_gts"),
                         number_at(*l, "current_width")};
  };
  auto parent_of = [&](const std::string& bdf) -> std::optional<PcieLinkFacts> {
    auto it = by_bdf.find(bdf);
    return it == by_bdf.end() ? std::nullopt : link_of(string_at(*it->second, "parent"));
  };
  std::vector<LinkDeviceFacts> out;
  for (const auto& g : array_of(doc, "gpus")) {
    std::string bdf = string_at(g, "bdf");
    out.push_back({gpu_label(g), true, link_of(bdf), parent_of(bdf)});
  }
  for (const auto& n : array_of(doc, "nics")) {
    if (array_of(n, "ports").empty()) continue;  // not an RDMA device
    std::string bdf = string_at(n, "bdf");
    out.push_back(
        {fmt::format("{} ({})", string_at(n, "name"), bdf), false, link_of(bdf), parent_of(bdf)});
  }
  return out;
}

std::vector<IbPortFacts> ib_ports(const json& doc) {
  std::vector<IbPortFacts> out;
  for (const auto& n : array_of(doc, "nics")) {
    for (const auto& p : array_of(n, "ports")) {
      if (string_at(p, "link_layer") != "InfiniBand") continue;
      std::string state = string_at(p, "state");
      if (auto colon = state.find(": "); colon != std::string::npos)
        state = state.substr(colon + 2);
      std::string port = p.contains("port") ? p["port"].dump() : "?";
      out.push_back({fmt::format("{} port {}", string_at(n, "name"), port), state,
                     number_at(p, "rate_gbps")});
    }
  }
  return out;
}

HostTopologyFacts host_facts(const json& doc) {
  HostTopologyFacts f;
  f.numa_nodes = array_of(doc, "numa_nodes").size();
  for (const auto& g : array_of(doc, "gpus")) {
    f.gpus.push_back({gpu_label(g), number_at(g, "nvlinks_up"), number_at(g, "nvlinks_total")});
  }
  f.link_devices = link_devices(doc);
  f.ib_ports = ib_ports(doc);
  if (auto g = doc.find("gdr"); g != doc.end()) {
    f.gdr_present = g->is_object() && g->value("present", false);
    f.gdr_module = string_at(*g, "module");
  }
  for (const auto& line : array_of(doc, "warnings")) {
    f.warnings.push_back(line.is_string() ? line.get<std::string>() : line.dump());
  }
  return f;
}

}  // namespace

void validate_topology(const json& doc, const std::string& source) {
  const std::string expected = fmt::format("{} or {}", kTopologySchema, kClusterTopologySchema);
  if (!doc.is_object())
    usage_error("{}: not a JSON object: expected a {} document", source, expected);
  auto schema = doc.find("schema");
  if (schema == doc.end() || !schema->is_string()) {
    usage_error("{}: no 'schema' field: expected a {} document", source, expected);
  }
  if (schema->get<std::string>() == kClusterTopologySchema) {
    auto hosts = doc.find("hosts");
    if (hosts == doc.end() || !hosts->is_array() || hosts->empty()) {
      usage_error("{}: 'hosts' must be a non-empty array in a {} document", source,
                  kClusterTopologySchema);
    }
    for (const auto& h : *hosts) {
      if (!h.is_object() || !h.contains("host") || !h["host"].is_string() ||
          !h.contains("topology")) {
        usage_error("{}: every entry of 'hosts' needs 'host' and 'topology'", source);
      }
      validate_topology(h["topology"], source + " (host " + h["host"].get<std::string>() + ")");
    }
    for (const char* key : {"groups", "differences"}) {
      auto it = doc.find(key);
      if (it == doc.end() || !it->is_array())
        usage_error("{}: '{}' must be an array in a {} document", source, key,
                    kClusterTopologySchema);
    }
    return;
  }
  if (schema->get<std::string>() != kTopologySchema) {
    usage_error("{}: unknown schema '{}': expected {}", source, schema->get<std::string>(),
                expected);
  }
  for (const char* key : {"numa_nodes", "pci_devices", "gpus", "nics", "warnings"}) {
    auto it = doc.find(key);
    if (it != doc.end() && !it->is_array()) {
      usage_error("{}: '{}' must be an array in a {} document", source, key, kTopologySchema);
    }
  }
}

TopologyFacts topology_facts(const json& doc) {
  TopologyFacts t;
  t.cluster = doc.is_object() && doc.value("schema", std::string()) == kClusterTopologySchema;
  if (!t.cluster) {
    t.host = host_facts(doc);
    return t;
  }
  for (const auto& h : array_of(doc, "hosts")) {
    t.hosts.push_back({string_at(h, "host"), host_facts(h.value("topology", json::object()))});
  }
  const json& groups = array_of(doc, "groups");
  for (std::size_t g = 1; g < groups.size(); ++g)
    for (const auto& h : array_of(groups[g], "hosts")) t.odd_hosts.push_back(h.get<std::string>());
  for (const auto& d : array_of(doc, "differences")) {
    t.differences.push_back(fmt::format("{}: {} = {} (majority {})", string_at(d, "host"),
                                        string_at(d, "field"), d.value("value", json()).dump(),
                                        d.value("majority", json()).dump()));
  }
  return t;
}

}  // namespace cb
