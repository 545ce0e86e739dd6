// The PCI devices of a host as sysfs shows them: identity, place in the bridge hierarchy, NUMA
// node, local CPUs, IOMMU group, link speed and width, and the rule that flags a link degraded.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probes/sysfs.hpp"

namespace cb {

struct PciLink {
  std::optional<double> current_gts, max_gts;
  std::optional<int> current_width, max_width;
  bool degraded = false;      // see judge_links()
  bool power_saving = false;  // a GPU's reduced speed that is its idle power state, not a fault
  bool empty_port = false;    // a port with nothing below it: its link is not judged
  std::string reason;         // why degraded, for the warning
  std::optional<double> capped_by_gts;  // upstream port's max speed, when below this device's
};

// Which link a device's link files describe: endpoints and switch upstream ports show the link
// to their parent; root ports and switch downstream ports show the link to their children.
enum class LinkRole { Up, Down };

// Access Control Services of a bridge. Reading it needs the extended config space, which only
// root can read; otherwise the status says so and nothing is guessed.
struct AcsInfo {
  std::string status;               // "needs root", "not present", "read"
  std::optional<unsigned> control;  // ACS control register when read
  bool p2p_redirect = false;        // request or completion redirect set
};

struct PciDevice {
  std::string bdf;   // "0000:18:00.0"
  std::string kind;  // gpu, nic, nvswitch, bridge, storage, other
  unsigned class_code = 0, vendor = 0, device = 0;
  std::optional<int> numa_node;        // null when sysfs says -1
  std::string host_bridge;             // "pci0000:15"
  std::vector<std::string> ancestors;  // PCI bridges above, nearest last
  std::optional<std::string> parent() const {
    return ancestors.empty() ? std::nullopt : std::optional(ancestors.back());
  }
  std::vector<std::string> children;
  std::optional<std::string> local_cpus;  // local_cpulist as written by the kernel
  std::optional<int> iommu_group;
  std::optional<std::string> driver;
  std::optional<PciLink> link;  // null where there are no link files (virtio)
  LinkRole role = LinkRole::Up;
  std::optional<AcsInfo> acs;  // bridges only
};

// "0x030200" and vendor -> gpu, nic, nvswitch, bridge, storage or other.
std::string pci_kind(unsigned class_code, unsigned vendor);
// "32.0 GT/s PCIe", "8 GT/s" -> GT/s; "Unknown" -> nullopt.
std::optional<double> parse_link_speed(std::string_view text);
// ACS from a `config` file's bytes (64 bytes when read without root).
AcsInfo parse_acs(std::string_view config);
// True for a string shaped like a PCI address, "0000:18:00.0".
bool is_bdf(std::string_view s);

// Every PCI device, sorted by address, with links judged.
std::vector<PciDevice> scan_pci(Sysfs& sys);

// The degraded rule, applied to every device's link (scan_pci calls it; exposed for tests):
// - reduced width (current below the lesser of this port's and its partner's max) is a fault;
// - reduced speed is a fault, except on a GPU, whose driver lowers the link speed when idle:
//   there it is power saving unless the switch uplink above the GPU is slow too;
// - a root or downstream port shows the same link as the device below it and takes that
//   device's judgement; a port with nothing below it is not judged.
void judge_links(std::vector<PciDevice>& devices);

const PciDevice* find_device(const std::vector<PciDevice>& devices, std::string_view bdf);

}  // namespace cb
