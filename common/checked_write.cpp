#include "common/checked_write.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "common/error.hpp"

namespace cb {

void write_all(int fd, std::string_view text, const std::string& name) {
  while (!text.empty()) {
    ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : ENOSPC;
      runtime_error("cannot write {}: {}", name, std::strerror(err));
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

std::string quoted_name(const std::string& path) {
  return "'" + path + "'";
}

void flush_stdout() {
  std::cout.flush();
  errno = 0;
  if (std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout) {
    int err = errno;
    if (err == 0) {
      // The failure came with an earlier flush and its errno is gone: one more byte tells why.
      err = ::write(STDOUT_FILENO, "\n", 1) < 0 ? errno : EIO;
    }
    std::clearerr(stdout);
    std::cout.clear();
    runtime_error("cannot write standard output: {}", std::strerror(err));
  }
}

}  // namespace cb
