#include "common/host_name.hpp"

#include <unistd.h>

namespace cb {

std::string host_name(std::string_view fallback) {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return std::string(fallback);
  return buf;
}

}  // namespace cb
