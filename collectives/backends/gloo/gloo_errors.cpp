#include "collectives/backends/gloo/gloo_errors.hpp"

namespace cb::gloo_backend {

std::string clean_gloo_message(std::string_view what) {
  // "[/build/gloo/transport/tcp/pair.cc:589] Read error ..." -> "Read error ..."
  while (!what.empty() && what.front() == '[') {
    auto close = what.find("] ");
    if (close == std::string_view::npos) break;
    what.remove_prefix(close + 2);
  }
  std::string s(what);
  for (auto& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

}  // namespace cb::gloo_backend
