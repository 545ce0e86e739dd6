// Read-only access to a sysfs tree: the live /sys or a captured copy laid out like it. Symlinks
// are resolved component by component and never leave the tree, so a captured snapshot behaves
// like the machine it came from. Everything read is remembered so that it can be captured.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace cb {

class Sysfs {
 public:
  explicit Sysfs(std::string root = "/sys");

  const std::string& root() const { return root_; }

  // Paths are relative to the root ("bus/pci/devices/0000:18:00.0/class").
  // Contents with trailing whitespace removed; nullopt when missing or unreadable (a netdev's
  // `speed` fails with EINVAL while the link is down).
  std::optional<std::string> read(const std::string& rel);
  // The raw bytes (PCI `config`).
  std::optional<std::string> read_binary(const std::string& rel);
  // Entry names, sorted; empty when the directory is missing. Directory and symlink entries are
  // remembered so that a capture lists the same names.
  std::vector<std::string> list(const std::string& rel);
  // The canonical path inside the tree with every symlink followed; nullopt when it is missing.
  std::optional<std::string> resolve(const std::string& rel);
  // The last component of where a symlink points ("driver" -> "nvidia", "iommu_group" -> "17").
  std::optional<std::string> link_name(const std::string& rel);

  // Writes every file, directory and symlink read so far below `dir` (which must not exist yet
  // or be empty). Symlinks keep their relative targets.
  void capture(const std::string& dir) const;

 private:
  std::optional<std::string> read_raw(const std::string& rel);

  std::string root_;
  std::map<std::string, std::string> files_;  // canonical path -> contents as read
  std::map<std::string, std::string> links_;  // symlink path (canonical parent) -> target
  std::set<std::string> dirs_;
};

}  // namespace cb
