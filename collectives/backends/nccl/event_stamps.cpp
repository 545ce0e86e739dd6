#include "collectives/backends/nccl/event_stamps.hpp"

#include <algorithm>
#include <cmath>

namespace cb::cuda {

CallStamps stamps_from_events(double anchor_us, const std::vector<std::vector<double>>& exits_ms,
                              const std::vector<double>& host_entries_us) {
  CallStamps out;
  if (exits_ms.empty()) return out;
  const std::size_t n = exits_ms.front().size();
  out.exit.assign(n, anchor_us);
  for (const auto& stream : exits_ms)
    for (std::size_t i = 0; i < n && i < stream.size(); ++i)
      out.exit[i] = std::max(out.exit[i], anchor_us + stream[i] * 1000.0);
  out.entry.assign(n, anchor_us);
  for (std::size_t i = 1; i < n; ++i) {
    out.entry[i] = out.exit[i - 1];
    if (i < host_entries_us.size() && !std::isnan(host_entries_us[i]))
      out.entry[i] = std::max(out.entry[i], host_entries_us[i]);
  }
  return out;
}

}  // namespace cb::cuda
