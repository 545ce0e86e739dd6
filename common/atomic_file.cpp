#include "common/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/checked_write.hpp"
#include "common/error.hpp"
#include "common/output_path.hpp"
#include "common/temp_files.hpp"

namespace cb {

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  // A symbolic link is written through: the file it points to is replaced, the link stays.
  temp_ = output_target(path_) + temp_suffix();
  fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd_ < 0) usage_error("cannot write '{}': {}", path_, std::strerror(errno));
  track_temp_file(temp_);
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) discard();
}

void AtomicFile::discard() noexcept {
  ::close(fd_);
  fd_ = -1;
  ::unlink(temp_.c_str());
  forget_temp_file(temp_);
}

void AtomicFile::commit() {
  try {
    write_all(fd_, out_.view(), quoted_name(path_));
    if (::fsync(fd_) != 0 && errno != EINVAL && errno != EROFS) {
      runtime_error("cannot write '{}': {}", path_, std::strerror(errno));
    }
    if (::close(fd_) != 0) {
      fd_ = -1;
      runtime_error("cannot write '{}': {}", path_, std::strerror(errno));
    }
    fd_ = -1;
    if (std::rename(temp_.c_str(), output_target(path_).c_str()) != 0) {
      runtime_error("cannot write '{}': {}", path_, std::strerror(errno));
    }
  } catch (...) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    ::unlink(temp_.c_str());
    forget_temp_file(temp_);
    throw;
  }
  forget_temp_file(temp_);
}

void write_file_atomically(const std::string& path, const std::string& text) {
  AtomicFile file(path);
  file.stream() << text;
  file.commit();
}

}  // namespace cb
