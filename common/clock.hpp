// Wall-clock time as result files record it, and elapsed time on the steady clock.
#pragma once

#include <chrono>
#include <string>

namespace cb {

// Now, as "2026-01-01T12:00:00Z" (ISO 8601, UTC).
std::string utc_now_iso8601();

// Seconds elapsed on the steady clock since `start`.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace cb
