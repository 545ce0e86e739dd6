#include "collectives/engine/memory_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "common/units.hpp"

namespace cb {

namespace {

std::uint64_t meminfo_available() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

// cgroup v2: memory.max - memory.current of this process's group, when it has a limit.
std::uint64_t cgroup_headroom() {
  std::ifstream self("/proc/self/cgroup");
  std::string line, group;
  while (std::getline(self, line)) {
    if (line.rfind("0::", 0) == 0) group = line.substr(3);
  }
  if (group.empty()) return 0;
  const std::string dir = "/sys/fs/cgroup" + group;
  std::ifstream max_in(dir + "/memory.max"), cur_in(dir + "/memory.current");
  std::string max_s;
  std::uint64_t current = 0;
  if (!(max_in >> max_s) || max_s == "max" || !(cur_in >> current)) return 0;
  std::uint64_t limit = std::stoull(max_s);
  return limit > current ? limit - current : 1;
}

}  // namespace

std::uint64_t available_host_memory() {
  std::uint64_t avail = meminfo_available();
  if (std::uint64_t room = cgroup_headroom(); room > 0)
    avail = avail ? std::min(avail, room) : room;
  return avail;
}

std::string host_memory_shortfall(std::uint64_t send, std::uint64_t recv, int ranks_here,
                                  std::uint64_t available) {
  const std::uint64_t per_rank = send + recv;
  const std::uint64_t need = per_rank * static_cast<std::uint64_t>(std::max(ranks_here, 1));
  if (available == 0 || need <= available) return "";
  return fmt::format(
      "cannot allocate host buffers: {} rank{} on this host need {} each ({} send + {} receive "
      "buffer), {} in all, but {} is available; lower --max-bytes or the number of ranks",
      ranks_here, ranks_here == 1 ? "" : "s", format_size(per_rank), format_size(send),
      format_size(recv), format_size(need), format_size(available));
}

}  // namespace cb
