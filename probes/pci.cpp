#include "probes/pci.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <map>

namespace cb {

namespace {

std::optional<unsigned> hex_value(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  std::string_view s = *text;
  if (s.rfind("0x", 0) == 0) s.remove_prefix(2);
  unsigned v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<int> int_value(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  int v = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size()) return std::nullopt;
  return v;
}

std::optional<PciLink> read_link(Sysfs& sys, const std::string& dir) {
  auto cur_speed = sys.read(dir + "/current_link_speed");
  auto max_speed = sys.read(dir + "/max_link_speed");
  auto cur_width = sys.read(dir + "/current_link_width");
  auto max_width = sys.read(dir + "/max_link_width");
  if (!cur_speed && !max_speed && !cur_width && !max_width) return std::nullopt;
  PciLink link;
  if (cur_speed) link.current_gts = parse_link_speed(*cur_speed);
  if (max_speed) link.max_gts = parse_link_speed(*max_speed);
  link.current_width = int_value(cur_width);
  link.max_width = int_value(max_width);
  return link;
}

unsigned le16(std::string_view b, std::size_t at) {
  return static_cast<unsigned char>(b[at]) |
         static_cast<unsigned>(static_cast<unsigned char>(b[at + 1])) << 8;
}

unsigned le32(std::string_view b, std::size_t at) {
  return le16(b, at) | le16(b, at + 2) << 16;
}

bool speed_reduced(const PciLink& l, std::optional<double> max) {
  return l.current_gts && max && *l.current_gts + 1e-6 < *max;
}

std::optional<double> min_opt(std::optional<double> a, std::optional<double> b) {
  if (a && b) return std::min(*a, *b);
  return a ? a : b;
}

std::optional<int> min_opt(std::optional<int> a, std::optional<int> b) {
  if (a && b) return std::min(*a, *b);
  return a ? a : b;
}

}  // namespace

bool is_bdf(std::string_view s) {
  // dddd:bb:dd.f, hexadecimal
  if (s.size() != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.') return false;
  for (std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9, 11}) {
    if (!std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

std::string pci_kind(unsigned class_code, unsigned vendor) {
  unsigned base = class_code >> 16, sub = class_code >> 8;
  if (sub == 0x0302) return "gpu";
  if (sub == 0x0300 && (vendor == 0x10de || vendor == 0x1002)) return "gpu";  // not BMC VGA
  if (class_code == 0x068000 && vendor == 0x10de) return "nvswitch";
  if (base == 0x02) return "nic";
  if (base == 0x01) return "storage";
  if (sub == 0x0604 || sub == 0x0600) return "bridge";
  return "other";
}

std::optional<double> parse_link_speed(std::string_view text) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end == text.data() || v <= 0) return std::nullopt;
  return v;
}

AcsInfo parse_acs(std::string_view config) {
  AcsInfo acs;
  if (config.size() <= 64) {
    acs.status = "needs root";
    return acs;
  }
  acs.status = "not present";
  if (config.size() < 0x104) return acs;  // conventional config space only
  std::size_t at = 0x100;
  for (int guard = 0; guard < 96 && at >= 0x100 && at + 8 <= config.size(); ++guard) {
    unsigned header = le32(config, at);
    if (header == 0 || header == 0xffffffff) break;
    if ((header & 0xffff) == 0x000d) {
      acs.status = "read";
      acs.control = le16(config, at + 6);
      acs.p2p_redirect = (*acs.control & 0x0c) != 0;  // RR 0x04, CR 0x08
      return acs;
    }
    at = (header >> 20) & 0xffc;
    if (at == 0) break;
  }
  return acs;
}

const PciDevice* find_device(const std::vector<PciDevice>& devices, std::string_view bdf) {
  for (const auto& d : devices) {
    if (d.bdf == bdf) return &d;
  }
  return nullptr;
}

std::vector<PciDevice> scan_pci(Sysfs& sys) {
  std::vector<PciDevice> devices;
  for (const auto& bdf : sys.list("bus/pci/devices")) {
    if (!is_bdf(bdf)) continue;
    std::string dir = "bus/pci/devices/" + bdf;
    auto path = sys.resolve(dir);
    if (!path) continue;
    PciDevice d;
    d.bdf = bdf;
    d.class_code = hex_value(sys.read(dir + "/class")).value_or(0);
    d.vendor = hex_value(sys.read(dir + "/vendor")).value_or(0);
    d.device = hex_value(sys.read(dir + "/device")).value_or(0);
    d.kind = pci_kind(d.class_code, d.vendor);
    // The canonical path names the host bridge and every bridge between it and the device.
    std::string_view rest = *path;
    while (!rest.empty()) {
      auto slash = rest.find('/');
      std::string_view part = rest.substr(0, slash);
      rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
      if (part == bdf) break;
      if (is_bdf(part)) {
        d.ancestors.emplace_back(part);
      } else if (part.rfind("pci", 0) == 0 && d.ancestors.empty()) {
        d.host_bridge = std::string(part);
      }
    }
    auto numa = int_value(sys.read(dir + "/numa_node"));
    if (numa && *numa >= 0) d.numa_node = numa;
    d.local_cpus = sys.read(dir + "/local_cpulist");
    if (auto g = sys.link_name(dir + "/iommu_group")) d.iommu_group = int_value(*g);
    d.driver = sys.link_name(dir + "/driver");
    d.link = read_link(sys, dir);
    if ((d.class_code >> 8) == 0x0604) {
      auto config = sys.read_binary(dir + "/config");
      d.acs = config ? parse_acs(*config) : AcsInfo{"needs root", std::nullopt, false};
    }
    devices.push_back(std::move(d));
  }
  std::sort(devices.begin(), devices.end(),
            [](const PciDevice& a, const PciDevice& b) { return a.bdf < b.bdf; });
  std::map<std::string, PciDevice*> by_bdf;
  for (auto& d : devices) by_bdf[d.bdf] = &d;
  for (auto& d : devices) {
    if (auto p = d.parent(); p && by_bdf.count(*p)) by_bdf[*p]->children.push_back(d.bdf);
  }
  judge_links(devices);
  return devices;
}

void judge_links(std::vector<PciDevice>& devices) {
  std::map<std::string, PciDevice*> by_bdf;
  for (auto& d : devices) by_bdf[d.bdf] = &d;
  auto get = [&](const std::optional<std::string>& bdf) -> PciDevice* {
    if (!bdf) return nullptr;
    auto it = by_bdf.find(*bdf);
    return it == by_bdf.end() ? nullptr : it->second;
  };
  // Roles from the top down: a root port shows the link below it, a switch upstream port the
  // link above, its downstream ports the links below, and so on, alternating.
  std::vector<PciDevice*> order;
  for (auto& d : devices) order.push_back(&d);
  std::stable_sort(order.begin(), order.end(), [](const PciDevice* a, const PciDevice* b) {
    return a->ancestors.size() < b->ancestors.size();
  });
  for (PciDevice* d : order) {
    bool bridge = (d->class_code >> 8) == 0x0604;
    PciDevice* parent = get(d->parent());
    if (!bridge) {
      d->role = LinkRole::Up;
    } else if (!parent) {
      d->role = LinkRole::Down;
    } else {
      d->role = parent->role == LinkRole::Up ? LinkRole::Down : LinkRole::Up;
    }
  }
  // The other end of an Up link is the parent port; its max caps this link (as NCCL takes it).
  auto partner_max = [&](PciDevice& d) -> std::pair<std::optional<double>, std::optional<int>> {
    PciDevice* p = get(d.parent());
    if (p && p->role == LinkRole::Down && p->link) return {p->link->max_gts, p->link->max_width};
    return {std::nullopt, std::nullopt};
  };
  auto effective_speed = [&](PciDevice& d) {
    return min_opt(d.link->max_gts, partner_max(d).first);
  };
  for (PciDevice* d : order) {
    if (!d->link || d->role != LinkRole::Up) continue;
    PciLink& l = *d->link;
    auto [p_speed, p_width] = partner_max(*d);
    if (p_speed && l.max_gts && *p_speed + 1e-6 < *l.max_gts) l.capped_by_gts = p_speed;
    auto max_speed = min_opt(l.max_gts, p_speed);
    auto max_width = min_opt(l.max_width, p_width);
    std::vector<std::string> why;
    if (l.current_width && max_width && *l.current_width < *max_width) {
      why.push_back(fmt::format("width x{} of x{}", *l.current_width, *max_width));
    }
    if (speed_reduced(l, max_speed)) {
      std::string speed = fmt::format("speed {:g} of {:g} GT/s", *l.current_gts, *max_speed);
      if (d->kind != "gpu") {
        why.push_back(speed);
      } else {
        // The GPU's own link slows down when idle; the switch uplink above it does not.
        PciDevice* port = get(d->parent());
        PciDevice* uplink = port ? get(port->parent()) : nullptr;
        if (uplink && uplink->role == LinkRole::Up && uplink->link &&
            speed_reduced(*uplink->link, effective_speed(*uplink))) {
          why.push_back(speed + fmt::format(" and the switch uplink {} is slow too", uplink->bdf));
        } else {
          l.power_saving = true;
        }
      }
    }
    if (!why.empty()) {
      l.degraded = true;
      l.reason = why[0];
      for (std::size_t i = 1; i < why.size(); ++i) l.reason += ", " + why[i];
    }
  }
  // Ports showing the link below them take the judgement of the device there.
  for (PciDevice* d : order) {
    if (!d->link || d->role != LinkRole::Down) continue;
    PciLink& l = *d->link;
    const PciDevice* below = nullptr;
    for (const auto& c : d->children) {
      PciDevice* child = get(c);
      if (child && child->link && (!below || child->bdf < below->bdf)) below = child;
    }
    if (below) {
      l.degraded = below->link->degraded;
      l.power_saving = below->link->power_saving;
      l.reason = below->link->reason;
    } else if (d->children.empty()) {
      l.empty_port = true;
    } else {
      // Devices below without link files: judge the port's own reading.
      if (l.current_width && l.max_width && *l.current_width < *l.max_width) {
        l.degraded = true;
        l.reason = fmt::format("width x{} of x{}", *l.current_width, *l.max_width);
      } else if (speed_reduced(l, l.max_gts)) {
        l.degraded = true;
        l.reason = fmt::format("speed {:g} of {:g} GT/s", *l.current_gts, *l.max_gts);
      }
    }
  }
}

}  // namespace cb
