#include "probes/net.hpp"

#include <charconv>

#include "probes/pci.hpp"

namespace cb {

std::optional<std::string> last_bdf_in_path(const std::string& path) {
  std::optional<std::string> found;
  std::size_t start = 0;
  while (start <= path.size()) {
    auto slash = path.find('/', start);
    std::string part =
        path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (is_bdf(part)) found = part;
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return found;
}

std::string after_colon(const std::string& text) {
  auto colon = text.find(':');
  std::string s = colon == std::string::npos ? text : text.substr(colon + 1);
  auto first = s.find_first_not_of(' ');
  return first == std::string::npos ? std::string() : s.substr(first);
}

std::optional<double> parse_ib_rate(const std::string& text) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end == text.data() || v < 0) return std::nullopt;
  return v;
}

std::vector<RdmaNic> scan_rdma(Sysfs& sys) {
  std::vector<RdmaNic> nics;
  for (const auto& name : sys.list("class/infiniband")) {
    std::string dir = "class/infiniband/" + name;
    RdmaNic nic;
    nic.name = name;
    if (auto dev = sys.resolve(dir + "/device")) nic.bdf = last_bdf_in_path(*dev);
    for (const auto& p : sys.list(dir + "/ports")) {
      IbPort port;
      int number = 0;
      auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), number);
      if (ec != std::errc() || end != p.data() + p.size()) continue;
      port.port = number;
      std::string pdir = dir + "/ports/" + p;
      auto state = sys.read(pdir + "/state");
      port.state = state ? after_colon(*state) : "UNKNOWN";
      if (auto ps = sys.read(pdir + "/phys_state")) port.phys_state = after_colon(*ps);
      if (auto rate = sys.read(pdir + "/rate")) {
        port.rate = *rate;
        port.rate_gbps = parse_ib_rate(*rate);
      }
      port.link_layer = sys.read(pdir + "/link_layer").value_or("unknown");
      nic.ports.push_back(port);
    }
    nic.netdevs = sys.list(dir + "/device/net");
    nics.push_back(std::move(nic));
  }
  return nics;
}

std::vector<NetDev> scan_netdevs(Sysfs& sys, const std::vector<RdmaNic>& rdma) {
  std::vector<NetDev> out;
  for (const auto& name : sys.list("class/net")) {
    auto path = sys.resolve("class/net/" + name);
    if (!path || path->find("devices/virtual/") != std::string::npos) continue;
    NetDev d;
    d.name = name;
    if (auto dev = sys.resolve("class/net/" + name + "/device")) d.bdf = last_bdf_in_path(*dev);
    if (auto speed = sys.read("class/net/" + name + "/speed")) {
      long v = 0;
      auto [end, ec] = std::from_chars(speed->data(), speed->data() + speed->size(), v);
      if (ec == std::errc() && v > 0) d.speed_mbps = v;
    }
    d.operstate = sys.read("class/net/" + name + "/operstate");
    for (const auto& nic : rdma) {
      for (const auto& n : nic.netdevs) {
        if (n == name) d.rdma_device = nic.name;
      }
    }
    out.push_back(std::move(d));
  }
  return out;
}

GdrInfo probe_gdr(Sysfs& sys) {
  const std::pair<const char*, const char*> candidates[] = {
      {"module/nvidia_peermem/version", "nvidia_peermem"},
      {"kernel/mm/memory_peers/nv_mem/version", "nv_peer_mem"},
      {"kernel/mm/memory_peers/nv_mem_nc/version", "nv_peer_mem"},
      {"module/nv_peer_mem/version", "nv_peer_mem"},
  };
  for (const auto& [path, module] : candidates) {
    if (sys.read(path)) return {std::string(module), true};
  }
  return {};
}

}  // namespace cb
