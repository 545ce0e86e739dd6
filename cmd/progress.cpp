#include "cmd/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace cb {

Progress::Progress(const std::string& mode, bool enabled_rank) {
  on_ = enabled_rank && (mode == "always" || (mode == "auto" && ::isatty(STDERR_FILENO)));
}

void Progress::update(std::size_t done, std::size_t total, const std::string& what) {
  if (!on_) return;
  int digits = static_cast<int>(std::to_string(total).size());
  std::string line = fmt::format("[{:>{}}/{}] {}", done, digits, total, what);
  std::string pad(width_ > line.size() ? width_ - line.size() : 0, ' ');
  std::fprintf(stderr, "\r%s%s", line.c_str(), pad.c_str());
  std::fflush(stderr);
  width_ = line.size();
}

void Progress::clear() {
  if (!on_ || width_ == 0) return;
  std::fprintf(stderr, "\r%s\r", std::string(width_, ' ').c_str());
  std::fflush(stderr);
  width_ = 0;
}

}  // namespace cb
