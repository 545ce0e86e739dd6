#include "probes/roof_facts.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "common/atomic_file.hpp"
#include "common/clock.hpp"
#include "common/error.hpp"
#include "common/host_name.hpp"
#include "common/units.hpp"
#include "probes/membw.hpp"

namespace cb {

using nlohmann::json;

void read_roof_link_gbps(const std::string& link_gbps, RoofInputs& in) {
  if (link_gbps.empty()) return;
  double v = parse_double(link_gbps, "--roof-link-gbps");
  if (!(v > 0)) usage_error("invalid --roof-link-gbps '{}': expected Gbit/s > 0", link_gbps);
  in.link_gbps = v;
}

void read_roof_host_memory(const std::string& host_memory, RoofInputs& in) {
  if (host_memory == "measure") {
    in.measure_host_memory_now = true;
  } else if (!host_memory.empty()) {
    double v = parse_double(host_memory, "--roof-host-memory");
    if (!(v > 0)) {
      usage_error("invalid --roof-host-memory '{}': expected GB/s > 0 or 'measure'", host_memory);
    }
    in.host_memory_GBps = v;
  }
}

RoofInputs parse_roof_inputs(const std::string& link_gbps, const std::string& host_memory) {
  RoofInputs in;
  read_roof_link_gbps(link_gbps, in);
  read_roof_host_memory(host_memory, in);
  return in;
}

double pcie_GBps(double gts, int width) {
  const double encoding = gts >= 8 ? 128.0 / 130.0 : 0.8;
  return gts * encoding / 8 * width;
}

std::optional<NvlinkGeneration> nvlink_generation(int cc_major) {
  if (cc_major == 7) return NvlinkGeneration{2, 25};
  if (cc_major == 8) return NvlinkGeneration{3, 25};
  if (cc_major == 9) return NvlinkGeneration{4, 25};
  if (cc_major >= 10) return NvlinkGeneration{5, 50};
  return std::nullopt;
}

namespace {

// The link as it is trained now; a GPU idling in a power-saving state is judged at its maximum
// (it speeds up under load), as NCCL reads max_link_*.
std::optional<double> link_GBps(const PciDevice& d, std::string* text = nullptr) {
  if (!d.link) return std::nullopt;
  const PciLink& l = *d.link;
  std::optional<double> gts = l.power_saving ? l.max_gts : l.current_gts;
  std::optional<int> width = l.current_width;
  if (!gts || !width || *width <= 0) return std::nullopt;
  if (text) *text = fmt::format("{:g} GT/s x{}", *gts, *width);
  return pcie_GBps(*gts, *width);
}

// The narrowest link from a device up to its root port (switch upstream ports included).
std::optional<double> uplink_GBps(const Topology& topo, const PciDevice& d) {
  std::optional<double> narrowest = link_GBps(d);
  for (const auto& bdf : d.ancestors) {
    const PciDevice* a = find_device(topo.pci, bdf);
    if (!a || a->role != LinkRole::Up) continue;  // downstream/root ports repeat a child's link
    if (auto v = link_GBps(*a); v && (!narrowest || *v < *narrowest)) narrowest = v;
  }
  return narrowest;
}

// A switch port above `d` that redirects peer-to-peer requests to the root complex (a root
// port's redirect changes nothing: peer traffic between root ports goes through it anyway).
bool p2p_redirected(const Topology& topo, const PciDevice& d) {
  for (const auto& bdf : d.ancestors) {
    const PciDevice* a = find_device(topo.pci, bdf);
    if (a && !a->ancestors.empty() && a->acs && a->acs->p2p_redirect) return true;
  }
  return false;
}

json gpu_facts(const Topology& topo, const GpuInfo& g) {
  json j = {{"bdf", g.bdf}, {"name", g.name ? json(*g.name) : json(nullptr)}};
  const NvmlGpu* nv = nullptr;
  if (topo.nvml) {
    for (const auto& x : topo.nvml->gpus) nv = x.bdf == g.bdf ? &x : nv;
  }
  std::optional<NvlinkGeneration> gen;
  if (nv && nv->cc_major) gen = nvlink_generation(*nv->cc_major);
  j["cc"] = nv && nv->cc_major ? json(fmt::format("{}.{}", *nv->cc_major, nv->cc_minor.value_or(0)))
                               : json(nullptr);
  j["nvlinks_up"] = g.nvlinks_up ? json(*g.nvlinks_up) : json(nullptr);
  j["nvlink_generation"] = gen ? json(gen->generation) : json(nullptr);
  j["nvlink_link_GBps"] = gen ? json(gen->link_GBps) : json(nullptr);
  j["nvswitch"] = g.nvswitch;
  // NVLink SHARP needs NVSwitches of the third generation (Hopper and later).
  j["nvls"] = g.nvswitch && gen && gen->generation >= 4;
  const PciDevice* d = find_device(topo.pci, g.bdf);
  std::string text;
  auto own = d ? link_GBps(*d, &text) : std::nullopt;
  j["pcie_GBps"] = own ? json(*own) : json(nullptr);
  j["pcie_link"] = own ? json(text) : json(nullptr);
  auto up = d ? uplink_GBps(topo, *d) : std::nullopt;
  j["pcie_to_cpu_GBps"] = up ? json(*up) : json(nullptr);
  j["p2p_redirect"] = d && p2p_redirected(topo, *d);
  // The PCIe switch the GPU sits below (its upstream port), empty on a root port.
  std::string sw;
  if (d) {
    for (auto it = d->ancestors.rbegin(); it != d->ancestors.rend() && sw.empty(); ++it) {
      const PciDevice* a = find_device(topo.pci, *it);
      if (a && a->role == LinkRole::Up) sw = a->bdf;
    }
  }
  j["switch"] = sw;
  return j;
}

json network_facts(const Topology& topo, const RoofInputs& in) {
  json nics = json::array();
  if (in.link_gbps) {
    nics.push_back({{"name", "given"}, {"gbps", *in.link_gbps}, {"source", "--roof-link-gbps"}});
    return nics;
  }
  for (const auto& n : topo.nics) {
    for (const auto& p : n.ports) {
      if (p.state != "ACTIVE" || !p.rate_gbps) continue;
      nics.push_back({{"name", fmt::format("{}/{}", n.name, p.port)},
                      {"gbps", *p.rate_gbps},
                      {"link_layer", p.link_layer},
                      {"source", "sysfs"}});
    }
  }
  if (!nics.empty()) return nics;
  // No RDMA port: the kernel netdevs that are up with a known speed (TCP traffic).
  for (const auto& d : topo.netdevs) {
    if (d.operstate != "up" || !d.speed_mbps || *d.speed_mbps <= 0) continue;
    nics.push_back({{"name", d.name},
                    {"gbps", static_cast<double>(*d.speed_mbps) / 1000},
                    {"link_layer", "Ethernet"},
                    {"source", "sysfs"}});
  }
  return nics;
}

std::string boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id.empty() ? "unknown-boot" : id;
}

std::string cache_dir() {
  if (const char* d = std::getenv("COMMBENCH_CACHE_DIR"); d && *d) return d;
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return std::string(d) + "/commbench";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/commbench";
  return "/tmp/commbench-cache";
}

// The best of one kernel's cells with a CPU node's threads on its own memory node, and their sum,
// each cell at its fastest repeat: what the memory can do, which a busy moment only lowers.
std::pair<double, double> local_copy(const MembwResult& r) {
  double best = 0, sum = 0;
  for (const auto& [kernel, cells] : r.kernels) {
    for (const auto& c : cells) {
      if (c.cpu_node != c.memory_node && r.numa_bound) continue;
      best = std::max(best, c.max_GBps);
      sum += c.max_GBps;
    }
  }
  return {best, sum};
}

json measure_host_memory() {
  MembwOptions o;
  o.bytes = 64ULL << 20;
  o.repeats = 5;
  o.kernels = {MemKernel::Copy};
  o.threads = 1;
  const double one = local_copy(measure_membw(o)).first;
  o.threads = 0;  // every CPU of each node
  const double all = local_copy(measure_membw(o)).second;
  return {{"copy_1thread_GBps", one},
          {"copy_all_GBps", std::max(all, one)},
          {"measured", utc_now_iso8601()},
          {"measured_epoch", static_cast<double>(std::time(nullptr))},
          {"measurements", 1}};
}

// The cached figures and a new measurement: the higher of each (a ceiling only rises), the
// newer time, the measurements counted.
json highest_of(const json& cached, const json& now) {
  json out = now;
  for (const char* key : {"copy_1thread_GBps", "copy_all_GBps"}) {
    out[key] = std::max(cached.value(key, 0.0), now.value(key, 0.0));
  }
  out["measurements"] = cached.value("measurements", 1) + 1;
  return out;
}

}  // namespace

json host_memory_facts(bool now) {
  const std::string dir = cache_dir();
  const std::string path = fmt::format("{}/host-memory-{}-{}.json", dir, host_name(), boot_id());
  if (!now) {
    // One rank per host measures; the others wait for it on the lock and read its figure.
    for (std::size_t at = dir.find('/', 1);; at = dir.find('/', at + 1)) {
      ::mkdir(dir.substr(0, at).c_str(), 0755);  // each level; existing ones fail harmlessly
      if (at == std::string::npos) break;
    }
    int lock = ::open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock >= 0) ::flock(lock, LOCK_EX);
    json cached;
    if (std::ifstream in(path); in) cached = json::parse(in, nullptr, false);
    const bool have = cached.is_object() && cached.contains("copy_all_GBps");
    const double age =
        have ? static_cast<double>(std::time(nullptr)) - cached.value("measured_epoch", 0.0) : 0;
    if (have && age >= 0 && age < kHostMemoryRemeasureSeconds) {
      cached["source"] = fmt::format("probe membw copy, the highest of {} measurement{} this boot",
                                     cached.value("measurements", 1),
                                     cached.value("measurements", 1) == 1 ? "" : "s");
    } else {
      cached = have ? highest_of(cached, measure_host_memory()) : measure_host_memory();
      try {
        write_file_atomically(path, cached.dump() + "\n");
      } catch (const Error&) {
        // An unwritable cache only costs the next run a measurement.
      }
      cached["source"] =
          fmt::format("probe membw copy, measured at start{}",
                      have ? fmt::format(", the highest of {} measurements this boot",
                                         cached.value("measurements", 2))
                           : "");
    }
    if (lock >= 0) ::close(lock);
    return cached;
  }
  json m = measure_host_memory();
  m["source"] = "probe membw copy, measured in this launch";
  return m;
}

json cache_facts(Sysfs& sys) {
  // One entry per distinct cache: (level, type, the CPUs sharing it).
  std::map<std::tuple<int, std::string, std::string>, std::uint64_t> caches;
  for (const auto& cpu : sys.list("devices/system/cpu")) {
    if (!cpu.starts_with("cpu") || cpu.size() < 4 ||
        !std::isdigit(static_cast<unsigned char>(cpu[3])))
      continue;
    const std::string dir = "devices/system/cpu/" + cpu + "/cache";
    for (const auto& index : sys.list(dir)) {
      if (!index.starts_with("index")) continue;
      const std::string at = dir + "/" + index + "/";
      auto level = sys.read(at + "level");
      auto type = sys.read(at + "type");
      auto size = sys.read(at + "size");
      auto shared = sys.read(at + "shared_cpu_list");
      if (!level || !type || !size || *type == "Instruction") continue;
      std::uint64_t bytes = 0;
      try {
        bytes = parse_size(*size, "cache size");  // "32768K"
      } catch (const Error&) {
        continue;
      }
      caches[{std::atoi(level->c_str()), *type, shared.value_or(cpu)}] = bytes;
    }
  }
  if (caches.empty()) return nullptr;
  // "L1d 2 x 48 KiB, L2 2 x 1 MiB, L3 1 x 32 MiB"
  std::map<std::pair<int, std::string>, std::pair<int, std::uint64_t>> by_level;
  std::uint64_t total = 0;
  for (const auto& [key, bytes] : caches) {
    auto& [count, size] = by_level[{std::get<0>(key), std::get<1>(key)}];
    ++count;
    size = std::max(size, bytes);
    total += bytes;
  }
  std::string text;
  for (const auto& [key, entry] : by_level) {
    text += fmt::format("{}L{}{} {} x {}", text.empty() ? "" : ", ", key.first,
                        key.second == "Data" ? "d" : "", entry.first, format_size(entry.second));
  }
  return {{"bytes", total}, {"text", text}};
}

namespace {

// "AMD EPYC 7B13": the first `model name` of /proc/cpuinfo, empty where there is none.
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("model name")) continue;
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string v = line.substr(colon + 1);
    v.erase(0, v.find_first_not_of(" \t"));
    return v;
  }
  return {};
}

}  // namespace

json roof_facts(const Topology& topo, const RoofInputs& in, Sysfs* sys) {
  json gpus = json::array();
  for (const auto& g : topo.gpus) gpus.push_back(gpu_facts(topo, g));
  json facts = {{"gpus", gpus},
                {"nics", network_facts(topo, in)},
                {"gdr", topo.gdr.present},
                {"cpus", [&] {
                   std::size_t n = 0;
                   for (const auto& node : topo.numa) n += node.cpus.size();
                   return n;
                 }()}};
  if (in.host_memory_GBps) {
    facts["host_memory"] = {{"copy_1thread_GBps", *in.host_memory_GBps},
                            {"copy_all_GBps", *in.host_memory_GBps},
                            {"source", "--roof-host-memory"}};
  } else if (in.host_memory) {
    facts["host_memory"] = host_memory_facts(in.measure_host_memory_now);
  } else {
    facts["host_memory"] = nullptr;
  }
  if (sys) {
    facts["caches"] = cache_facts(*sys);
    if (is_live_sysfs(sys->root())) facts["cpu_model"] = cpu_model();
  }
  return facts;
}

}  // namespace cb
