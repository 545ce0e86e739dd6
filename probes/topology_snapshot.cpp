// Snapshots: a captured sysfs tree plus commbench-snapshot.json (host, NVML facts), written
// whole or not at all, and read back by the probe.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>

#include "common/error.hpp"
#include "common/schema.hpp"
#include "probes/topology_internal.hpp"

namespace cb {

// Loads the facts a snapshot carries (host, NVML). Absent file: unknown host, no NVML.
void read_snapshot_facts(Sysfs& sys, Topology& topo) {
  auto text = sys.read(kSnapshotFile);
  if (!text) {
    topo.nvml_status = "not in snapshot";
    return;
  }
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    usage_error("{}/{} is not valid JSON", sys.root(), kSnapshotFile);
  }
  if (j.contains("host") && j["host"].is_string()) topo.host = j["host"].get<std::string>();
  if (j.contains("nvml") && j["nvml"].is_object()) topo.nvml = nvml_facts_from_json(j["nvml"]);
  topo.nvml_status = j.value("nvml_status", topo.nvml ? "from snapshot" : "not in snapshot");
}

void capture_snapshot(const Sysfs& sys, const Topology& topo, const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0)
    usage_error("--capture '{}' already exists: name a new directory", dir);
  std::string temp = dir + ".partial." + std::to_string(::getpid());
  try {
    sys.capture(temp);
    nlohmann::json facts = {
        {"schema", kSnapshotSchema},
        {"host", opt_json(topo.host)},
        {"nvml", topo.nvml ? nvml_facts_to_json(*topo.nvml) : nlohmann::json(nullptr)},
        {"nvml_status", topo.nvml_status}};
    std::ofstream out(temp + "/" + kSnapshotFile);
    out << facts.dump(2) << "\n";
    out.close();
    if (!out) runtime_error("cannot write '{}/{}'", temp, kSnapshotFile);
    if (std::rename(temp.c_str(), dir.c_str()) != 0)
      runtime_error("cannot create '{}': {}", dir, std::strerror(errno));
  } catch (...) {
    // Remove the partial tree (only what was created under the temporary name).
    std::function<void(const std::string&)> remove_tree = [&](const std::string& path) {
      struct stat s {};
      if (::lstat(path.c_str(), &s) != 0) return;
      if (S_ISDIR(s.st_mode)) {
        Sysfs tree(path);
        for (const auto& e : tree.list("")) remove_tree(path + "/" + e);
        ::rmdir(path.c_str());
      } else {
        ::unlink(path.c_str());
      }
    };
    remove_tree(temp);
    throw;
  }
}

}  // namespace cb
