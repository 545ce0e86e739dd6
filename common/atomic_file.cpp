#include "common/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/checked_write.hpp"
#include "common/error.hpp"
#include "common/output_path.hpp"
#include "common/temp_files.hpp"

namespace cb {

namespace {

std::string directory_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

int open_named(const std::string& name) {
  return ::open(name.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
}

// Gives the unnamed file open at `fd` the name `name`: through /proc/self/fd (any user may), else
// by AT_EMPTY_PATH (where /proc is not mounted; it needs CAP_DAC_READ_SEARCH). 0 or an errno.
int link_unnamed(int fd, const std::string& name) {
  char proc[64];
  std::snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
  if (::linkat(AT_FDCWD, proc, AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0) return 0;
  const int err = errno;
  if (err == EEXIST) return err;
  return ::linkat(fd, "", AT_FDCWD, name.c_str(), AT_EMPTY_PATH) == 0 ? 0 : err;
}

}  // namespace

int open_unnamed_beside(const std::string& target) {
  const char* refuse = std::getenv("COMMBENCH_TEST_NO_TMPFILE");
  if (refuse && std::strcmp(refuse, "1") == 0) {
    errno = EOPNOTSUPP;
    return -1;
  }
  return ::open(directory_of(target).c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
}

bool unnamed_files_refused(int error) {
  // EOPNOTSUPP: a file system without them; EISDIR: a kernel without O_TMPFILE, which sees only
  // O_DIRECTORY; EINVAL: a file system that rejects the flag.
  return error == EOPNOTSUPP || error == EISDIR || error == EINVAL;
}

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  // A symbolic link is written through: the file it points to is replaced, the link stays.
  target_ = output_target(path_);
  temp_ = target_ + temp_suffix();
  fd_ = open_unnamed_beside(target_);
  if (fd_ >= 0) {
    unnamed_ = true;
    return;
  }
  if (!unnamed_files_refused(errno)) {
    usage_error("cannot write '{}': {}", path_, std::strerror(errno));
  }
  track_temp_file(temp_);
  named_ = true;
  fd_ = open_named(temp_);
  if (fd_ < 0) {
    const int err = errno;
    forget_temp_file(temp_);
    named_ = false;
    usage_error("cannot write '{}': {}", path_, std::strerror(err));
  }
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0 || named_) discard();
}

void AtomicFile::discard() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (named_) {
    ::unlink(temp_.c_str());
    forget_temp_file(temp_);
    named_ = false;
  }
}

void AtomicFile::write_out() {
  write_all(fd_, out_.view(), quoted_name(path_));
  if (::fsync(fd_) != 0 && errno != EINVAL && errno != EROFS) {
    runtime_error("cannot write '{}': {}", path_, std::strerror(errno));
  }
}

// The whole file written, it gets the temporary name, tracked first: a signal or the parent of a
// killed rank removes it if the rename never comes.
void AtomicFile::name_unnamed() {
  track_temp_file(temp_);
  named_ = true;
  int err = link_unnamed(fd_, temp_);
  if (err == EEXIST) {  // left by an older commbench with this tag: ours to replace, as before
    ::unlink(temp_.c_str());
    err = link_unnamed(fd_, temp_);
  }
  if (err == 0) return;
  // Neither way could name it (no /proc, no privilege): written again under the temporary name.
  ::close(fd_);
  fd_ = open_named(temp_);
  if (fd_ < 0) runtime_error("cannot write '{}': {}", path_, std::strerror(errno));
  write_out();
}

void AtomicFile::commit() {
  try {
    write_out();
    if (unnamed_) name_unnamed();
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) runtime_error("cannot write '{}': {}", path_, std::strerror(errno));
    if (std::rename(temp_.c_str(), target_.c_str()) != 0) {
      runtime_error("cannot write '{}': {}", path_, std::strerror(errno));
    }
  } catch (...) {
    discard();
    throw;
  }
  forget_temp_file(temp_);
  named_ = false;
}

void write_file_atomically(const std::string& path, const std::string& text) {
  AtomicFile file(path);
  file.stream() << text;
  file.commit();
}

}  // namespace cb
