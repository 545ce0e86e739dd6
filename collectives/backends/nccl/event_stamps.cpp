#include "collectives/backends/nccl/event_stamps.hpp"

#include <algorithm>
#include <cmath>

namespace cb::cuda {

CallStamps stamps_from_events(double anchor_us, const std::vector<std::vector<double>>& exits_ms,
                              const std::vector<std::vector<double>>& entries_ms) {
  CallStamps out;
  if (exits_ms.empty()) return out;
  const std::size_t n = exits_ms.front().size();
  out.entry.assign(n, anchor_us);
  out.exit.assign(n, anchor_us);
  for (std::size_t s = 0; s < exits_ms.size(); ++s) {
    for (std::size_t i = 0; i < n && i < exits_ms[s].size(); ++i) {
      const double exit = anchor_us + exits_ms[s][i] * 1000.0;
      double entry = i == 0 ? anchor_us : anchor_us + exits_ms[s][i - 1] * 1000.0;
      if (s < entries_ms.size() && i < entries_ms[s].size() && !std::isnan(entries_ms[s][i]))
        entry = std::max(entry, anchor_us + entries_ms[s][i] * 1000.0);
      out.exit[i] = std::max(out.exit[i], exit);
      out.entry[i] = std::max(out.entry[i], entry);
    }
  }
  return out;
}

}  // namespace cb::cuda
