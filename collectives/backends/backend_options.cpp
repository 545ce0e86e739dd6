#include "collectives/backends/backend_options.hpp"

namespace cb {

const std::string& BackendOptions::flag(const std::string& long_name) const {
  static const std::string kNone;
  auto it = flags.find(long_name);
  return it == flags.end() ? kNone : it->second;
}

}  // namespace cb
