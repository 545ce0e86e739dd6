#include "launch/temp_dir.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "common/error.hpp"

namespace cb {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/commbench-XXXXXX";
  if (!::mkdtemp(tmpl.data())) {
    runtime_error("cannot create a temporary directory from {}: {}", tmpl, std::strerror(errno));
  }
  path_ = tmpl;
}

void TempDir::check_writable(const std::string& purpose) const {
  const std::string probe = path_ + "/.probe";
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  int err = fd < 0 ? errno : 0;
  if (fd >= 0) {
    const std::string block(4096, '\0');
    ssize_t n = ::write(fd, block.data(), block.size());
    if (n != static_cast<ssize_t>(block.size())) err = n < 0 ? errno : ENOSPC;
    if (::close(fd) != 0 && err == 0) err = errno;
    ::unlink(probe.c_str());
  }
  if (err != 0) {
    runtime_error("cannot write the {} directory {}: {} (set TMPDIR to a writable directory)",
                  purpose, path_, std::strerror(err));
  }
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace cb
