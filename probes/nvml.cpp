#include "probes/nvml.hpp"

#include <dlfcn.h>

#include <cctype>
#include <cstdlib>
#include <cstring>

#include "common/error.hpp"
#include "probes/cpulist.hpp"

namespace cb {

namespace {

// The NVML ABI as far as this file uses it (there is no nvml.h on build machines).
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t kSuccess = 0;
constexpr nvmlReturn_t kInvalidArgument = 2;
constexpr int kDeviceTypeSwitch = 2;
constexpr unsigned kBufferSize = 96;

// nvmlPciInfo_t as used by the _v3 / _v2 symbols (68 bytes).
struct PciInfo {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
static_assert(sizeof(PciInfo) == 68);

struct Api {
  void* handle = nullptr;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*driver_version)(char*, unsigned) = nullptr;
  nvmlReturn_t (*count)(unsigned*) = nullptr;
  nvmlReturn_t (*by_index)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*pci_info)(nvmlDevice_t, PciInfo*) = nullptr;
  nvmlReturn_t (*cpu_affinity)(nvmlDevice_t, unsigned, unsigned long*) = nullptr;
  nvmlReturn_t (*numa_node)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*compute_capability)(nvmlDevice_t, int*, int*) = nullptr;
  nvmlReturn_t (*nvlink_state)(nvmlDevice_t, unsigned, int*) = nullptr;
  nvmlReturn_t (*nvlink_remote_pci)(nvmlDevice_t, unsigned, PciInfo*) = nullptr;
  nvmlReturn_t (*nvlink_remote_type)(nvmlDevice_t, unsigned, int*) = nullptr;

  std::string error(nvmlReturn_t rc) const {
    const char* s = error_string ? error_string(rc) : nullptr;
    return s ? std::string(s) : "NVML error " + std::to_string(rc);
  }
};

template <typename F>
bool bind(void* handle, const char* symbol, F& fn) {
  fn = reinterpret_cast<F>(::dlsym(handle, symbol));
  return fn != nullptr;
}

std::string c_string(const char* buf, std::size_t cap) {
  return std::string(buf, ::strnlen(buf, cap));
}

// An absent NVLink answers NOT_SUPPORTED; past the last link NVML answers INVALID_ARGUMENT.
// The link count has grown (12, 18, 36), so loop until that answer.
std::vector<NvLinkFact> read_nvlinks(const Api& api, nvmlDevice_t dev) {
  std::vector<NvLinkFact> links;
  if (!api.nvlink_state) return links;
  for (unsigned l = 0; l < 64; ++l) {
    int state = 0;
    nvmlReturn_t rc = api.nvlink_state(dev, l, &state);
    if (rc == kInvalidArgument) break;
    if (rc != kSuccess) continue;
    NvLinkFact f;
    f.link = static_cast<int>(l);
    f.active = state == 1;
    PciInfo remote{};
    if (api.nvlink_remote_pci && api.nvlink_remote_pci(dev, l, &remote) == kSuccess) {
      std::string id = c_string(remote.busId, sizeof remote.busId);
      if (!id.empty()) f.remote_bdf = normalize_bus_id(id);
    }
    int type = -1;
    if (api.nvlink_remote_type && api.nvlink_remote_type(dev, l, &type) == kSuccess) {
      f.remote_is_switch = type == kDeviceTypeSwitch;
    }
    links.push_back(f);
  }
  return links;
}

}  // namespace

std::string nvml_library_name() {
  const char* env = std::getenv("COMMBENCH_NVML_LIBRARY");
  return env && *env ? env : "libnvidia-ml.so.1";
}

std::string normalize_bus_id(std::string_view id) {
  std::string s(id);
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // NVML writes an 8-digit domain; sysfs writes 4.
  auto colon = s.find(':');
  if (colon != std::string::npos && colon > 4) {
    std::string domain = s.substr(0, colon);
    std::size_t keep = domain.size() - 4;
    if (domain.find_first_not_of('0') >= keep) s = s.substr(keep);
  }
  return s;
}

std::optional<NvmlFacts> query_nvml(std::string& why) {
  Api api;
  std::string lib = nvml_library_name();
  api.handle = ::dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!api.handle) {
    why = "NVML not found (" + lib + ")";
    return std::nullopt;
  }
  bool ok = bind(api.handle, "nvmlInit_v2", api.init) &&
            bind(api.handle, "nvmlShutdown", api.shutdown) &&
            bind(api.handle, "nvmlDeviceGetCount_v2", api.count) &&
            bind(api.handle, "nvmlDeviceGetHandleByIndex_v2", api.by_index) &&
            bind(api.handle, "nvmlDeviceGetPciInfo_v3", api.pci_info);
  bind(api.handle, "nvmlErrorString", api.error_string);
  bind(api.handle, "nvmlSystemGetDriverVersion", api.driver_version);
  bind(api.handle, "nvmlDeviceGetName", api.name);
  bind(api.handle, "nvmlDeviceGetUUID", api.uuid);
  bind(api.handle, "nvmlDeviceGetCpuAffinity", api.cpu_affinity);
  bind(api.handle, "nvmlDeviceGetNumaNodeId", api.numa_node);
  bind(api.handle, "nvmlDeviceGetCudaComputeCapability", api.compute_capability);
  bind(api.handle, "nvmlDeviceGetNvLinkState", api.nvlink_state);
  bind(api.handle, "nvmlDeviceGetNvLinkRemotePciInfo_v2", api.nvlink_remote_pci);
  bind(api.handle, "nvmlDeviceGetNvLinkRemoteDeviceType", api.nvlink_remote_type);
  if (!ok) {
    why = lib + " lacks the functions needed (nvmlInit_v2, nvmlDeviceGetPciInfo_v3, ...)";
    ::dlclose(api.handle);
    return std::nullopt;
  }
  if (nvmlReturn_t rc = api.init(); rc != kSuccess) {
    why = "nvmlInit_v2 failed: " + api.error(rc);
    ::dlclose(api.handle);
    return std::nullopt;
  }
  NvmlFacts facts;
  char buf[kBufferSize] = {};
  if (api.driver_version && api.driver_version(buf, sizeof buf) == kSuccess) {
    facts.driver_version = c_string(buf, sizeof buf);
  }
  unsigned count = 0;
  if (nvmlReturn_t rc = api.count(&count); rc != kSuccess) {
    why = "nvmlDeviceGetCount_v2 failed: " + api.error(rc);
    api.shutdown();
    ::dlclose(api.handle);
    return std::nullopt;
  }
  for (unsigned i = 0; i < count; ++i) {
    nvmlDevice_t dev = nullptr;
    if (api.by_index(i, &dev) != kSuccess) continue;
    NvmlGpu g;
    g.index = static_cast<int>(i);
    PciInfo pci{};
    if (api.pci_info(dev, &pci) == kSuccess) g.bdf = normalize_bus_id(c_string(pci.busId, 32));
    if (api.name && api.name(dev, buf, sizeof buf) == kSuccess) g.name = c_string(buf, sizeof buf);
    if (api.uuid && api.uuid(dev, buf, sizeof buf) == kSuccess) g.uuid = c_string(buf, sizeof buf);
    if (api.cpu_affinity) {
      std::vector<unsigned long> mask(64, 0);  // 4096 CPUs
      if (api.cpu_affinity(dev, static_cast<unsigned>(mask.size()), mask.data()) == kSuccess) {
        g.cpu_affinity = format_cpulist(cpus_from_mask(mask));
      }
    }
    unsigned node = 0;
    if (api.numa_node && api.numa_node(dev, &node) == kSuccess)
      g.numa_node_id = static_cast<int>(node);
    int major = 0, minor = 0;
    if (api.compute_capability && api.compute_capability(dev, &major, &minor) == kSuccess) {
      g.cc_major = major;
      g.cc_minor = minor;
    }
    g.nvlinks = read_nvlinks(api, dev);
    facts.gpus.push_back(std::move(g));
  }
  api.shutdown();
  // NVML is not unloaded: some driver versions leave threads behind that would then crash.
  return facts;
}

nlohmann::json nvml_facts_to_json(const NvmlFacts& facts) {
  nlohmann::json gpus = nlohmann::json::array();
  auto opt = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  for (const auto& g : facts.gpus) {
    nlohmann::json links = nlohmann::json::array();
    for (const auto& l : g.nvlinks) {
      links.push_back({{"link", l.link},
                       {"active", l.active},
                       {"remote_bdf", opt(l.remote_bdf)},
                       {"remote_is_switch", l.remote_is_switch}});
    }
    gpus.push_back({{"index", g.index},
                    {"bdf", g.bdf},
                    {"name", g.name},
                    {"uuid", g.uuid},
                    {"cpu_affinity", opt(g.cpu_affinity)},
                    {"numa_node_id", opt(g.numa_node_id)},
                    {"cc_major", opt(g.cc_major)},
                    {"cc_minor", opt(g.cc_minor)},
                    {"nvlinks", links}});
  }
  return {{"driver_version", facts.driver_version}, {"gpus", gpus}};
}

NvmlFacts nvml_facts_from_json(const nlohmann::json& j) {
  try {
    NvmlFacts f;
    f.driver_version = j.value("driver_version", "");
    for (const auto& g : j.at("gpus")) {
      NvmlGpu gpu;
      gpu.index = g.at("index").get<int>();
      gpu.bdf = g.at("bdf").get<std::string>();
      gpu.name = g.value("name", "");
      gpu.uuid = g.value("uuid", "");
      if (g.contains("cpu_affinity") && !g["cpu_affinity"].is_null()) {
        gpu.cpu_affinity = g["cpu_affinity"].get<std::string>();
      }
      if (g.contains("numa_node_id") && !g["numa_node_id"].is_null()) {
        gpu.numa_node_id = g["numa_node_id"].get<int>();
      }
      if (g.contains("cc_major") && !g["cc_major"].is_null())
        gpu.cc_major = g["cc_major"].get<int>();
      if (g.contains("cc_minor") && !g["cc_minor"].is_null())
        gpu.cc_minor = g["cc_minor"].get<int>();
      for (const auto& l : g.value("nvlinks", nlohmann::json::array())) {
        NvLinkFact f2;
        f2.link = l.at("link").get<int>();
        f2.active = l.at("active").get<bool>();
        if (l.contains("remote_bdf") && !l["remote_bdf"].is_null()) {
          f2.remote_bdf = l["remote_bdf"].get<std::string>();
        }
        f2.remote_is_switch = l.value("remote_is_switch", false);
        gpu.nvlinks.push_back(f2);
      }
      f.gpus.push_back(std::move(gpu));
    }
    return f;
  } catch (const nlohmann::json::exception& e) {
    usage_error("malformed NVML facts in snapshot: {}", e.what());
  }
}

}  // namespace cb
