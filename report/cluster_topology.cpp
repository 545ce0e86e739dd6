#include "report/cluster_topology.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <set>

#include "common/text_table.hpp"

namespace cb {

namespace {

using json = nlohmann::json;

std::string element_name(const json& e, std::size_t position) {
  if (e.is_object()) {
    for (const char* key : {"bdf", "name", "port", "index", "id"}) {
      auto it = e.find(key);
      if (it != e.end() && (it->is_string() || it->is_number_integer()))
        return it->is_string() ? it->get<std::string>() : it->dump();
    }
  }
  return std::to_string(position);
}

void flatten(const json& j, const std::string& path, std::map<std::string, json>& out) {
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      if (path.empty() && (key == "schema" || key == "host" || key == "warnings")) continue;
      if (key == "memory_bytes" && path.rfind("numa_nodes[", 0) == 0) continue;
      flatten(value, path.empty() ? key : path + "." + key, out);
    }
  } else if (j.is_array() && std::any_of(j.begin(), j.end(), [](const json& e) {
               return e.is_object() || e.is_array();
             })) {
    for (std::size_t i = 0; i < j.size(); ++i)
      flatten(j[i], path + "[" + element_name(j[i], i) + "]", out);
  } else {
    out[path] = j;  // scalars and arrays of scalars (a CPU list) are one field
  }
}

std::string text(const json& v) {
  if (v.is_null()) return "absent";
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

}  // namespace

std::map<std::string, json> topology_shape(const json& topology) {
  std::map<std::string, json> out;
  flatten(topology, "", out);
  return out;
}

std::string topology_fingerprint(const json& topology) {
  std::uint64_t h = 1469598103934665603ULL;
  for (const auto& [key, value] : topology_shape(topology)) {
    for (char ch : key + "=" + value.dump() + "\n") {
      h ^= static_cast<unsigned char>(ch);
      h *= 1099511628211ULL;
    }
  }
  return fmt::format("{:016x}", h);
}

json cluster_topology(const std::vector<json>& topologies) {
  json doc = {{"schema", kClusterTopologySchema},
              {"hosts", json::array()},
              {"groups", json::array()},
              {"differences", json::array()}};
  std::vector<std::string> prints, names;
  for (const auto& t : topologies) {
    prints.push_back(topology_fingerprint(t));
    names.push_back(t.value("host", std::string("?")));
    doc["hosts"].push_back(
        {{"host", names.back()}, {"fingerprint", prints.back()}, {"topology", t}});
  }
  std::vector<std::pair<std::string, std::vector<std::size_t>>> groups;  // first-seen order
  for (std::size_t i = 0; i < prints.size(); ++i) {
    auto g = std::find_if(groups.begin(), groups.end(),
                          [&](const auto& e) { return e.first == prints[i]; });
    if (g == groups.end()) {
      groups.push_back({prints[i], {i}});
    } else {
      g->second.push_back(i);
    }
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  for (const auto& [print, members] : groups) {
    json hosts = json::array();
    for (auto i : members) hosts.push_back(names[i]);
    doc["groups"].push_back({{"fingerprint", print}, {"hosts", hosts}});
  }
  if (groups.size() < 2) return doc;
  const auto majority = topology_shape(topologies[groups.front().second.front()]);
  for (std::size_t g = 1; g < groups.size(); ++g) {
    for (auto i : groups[g].second) {
      const auto mine = topology_shape(topologies[i]);
      std::set<std::string> fields;
      for (const auto& kv : majority) fields.insert(kv.first);
      for (const auto& kv : mine) fields.insert(kv.first);
      for (const auto& f : fields) {
        auto a = mine.find(f);
        auto b = majority.find(f);
        json value = a == mine.end() ? json(nullptr) : a->second;
        json expected = b == majority.end() ? json(nullptr) : b->second;
        if (value != expected) {
          doc["differences"].push_back(
              {{"host", names[i]}, {"field", f}, {"value", value}, {"majority", expected}});
        }
      }
    }
  }
  return doc;
}

void print_cluster_topology(const json& doc, std::ostream& out) {
  const auto& groups = doc.at("groups");
  out << fmt::format("Cluster topology: {} host{}, {} distinct shape{}\n", doc.at("hosts").size(),
                     doc.at("hosts").size() == 1 ? "" : "s", groups.size(),
                     groups.size() == 1 ? "" : "s");
  TextTable g;
  g.set_header({"group", "fingerprint", "hosts"});
  for (std::size_t i = 0; i < groups.size(); ++i) {
    std::string hosts;
    for (const auto& h : groups[i].at("hosts")) {
      if (!hosts.empty()) hosts += ',';
      hosts += h.get<std::string>();
    }
    g.add_row({i == 0 ? "majority" : fmt::format("odd {}", i),
               groups[i].at("fingerprint").get<std::string>(), hosts});
  }
  g.print(out, "  ");
  const auto& diffs = doc.at("differences");
  if (diffs.empty()) {
    out << "\nEvery host has the same topology.\n";
    return;
  }
  out << "\nDifferences from the majority:\n";
  TextTable d;
  d.set_header({"host", "field", "value", "majority"});
  for (const auto& e : diffs) {
    d.add_row({e.at("host").get<std::string>(), e.at("field").get<std::string>(),
               text(e.at("value")), text(e.at("majority"))});
  }
  d.print(out, "  ");
}

}  // namespace cb
