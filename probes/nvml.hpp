// What NVML knows that sysfs does not: GPU names and UUIDs, CPU affinity, and NVLinks. NVML is
// loaded at run time with dlopen (no header or link-time dependency); the facts it gives are
// plain data so that a captured snapshot can carry them.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cb {

struct NvLinkFact {
  int link = 0;
  bool active = false;
  std::optional<std::string> remote_bdf;  // sysfs spelling, "0000:18:00.0"
  bool remote_is_switch = false;
};

struct NvmlGpu {
  int index = 0;
  std::string bdf;  // sysfs spelling
  std::string name;
  std::string uuid;
  std::optional<std::string> cpu_affinity;  // cpulist
  std::optional<int> numa_node_id;          // GPU memory as a NUMA node (GH200), else null
  std::optional<int> cc_major, cc_minor;
  std::vector<NvLinkFact> nvlinks;  // links NVML reports as supported
};

struct NvmlFacts {
  std::string driver_version;
  std::vector<NvmlGpu> gpus;
};

// The library tried: $COMMBENCH_NVML_LIBRARY, else libnvidia-ml.so.1.
std::string nvml_library_name();
// Loads NVML and reads every GPU; nullopt (with `why` set) when NVML is absent or fails.
std::optional<NvmlFacts> query_nvml(std::string& why);

// NVML's "00000000:18:00.0" (upper case, 8-digit domain) -> sysfs's "0000:18:00.0".
std::string normalize_bus_id(std::string_view nvml_bus_id);

nlohmann::json nvml_facts_to_json(const NvmlFacts& facts);
NvmlFacts nvml_facts_from_json(const nlohmann::json& j);  // throws a usage Error when malformed

}  // namespace cb
