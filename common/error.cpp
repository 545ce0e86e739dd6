#include "common/error.hpp"

#include <time.h>

namespace cb {

int exit_code(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::Usage:
      return kExitUsage;
    case ErrorKind::Runtime:
      return kExitRuntime;
    case ErrorKind::Validation:
      return kExitValidation;
    case ErrorKind::Timeout:
      return kExitTimeout;
    case ErrorKind::Regression:
      return kExitRegression;
  }
  return kExitRuntime;
}

std::int64_t wall_clock_ns() noexcept {
  struct timespec ts {};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace cb
