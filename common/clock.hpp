// Wall-clock time as result files record it.
#pragma once

#include <string>

namespace cb {

// Now, as "2026-01-01T12:00:00Z" (ISO 8601, UTC).
std::string utc_now_iso8601();

}  // namespace cb
