#include "common/output_path.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/temp_files.hpp"

namespace cb {

namespace fs = std::filesystem;

std::string output_target(const std::string& path) {
  std::error_code ec;
  if (!fs::is_symlink(fs::symlink_status(path, ec))) return path;
  fs::path target = fs::weakly_canonical(path, ec);
  return ec ? path : target.string();
}

namespace {

// Creates the unnamed file the output will be written through (or, where the file system has
// none, creates and removes its temporary name), so that a directory nobody may write (even root:
// a read-only mount, /sys) is refused here, by the commbench the user started, rather than by a
// rank after the launch.
void check_can_create_beside(const std::string& path) {
  const std::string target = output_target(path);
  if (int fd = open_unnamed_beside(target); fd >= 0) {
    ::close(fd);
    return;
  } else if (!unnamed_files_refused(errno)) {
    usage_error("cannot write output '{}': {}", path, std::strerror(errno));
  }
  const std::string probe = target + temp_suffix();
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    if (errno == EEXIST) return;  // not ours to remove; the writer replaces it
    usage_error("cannot write output '{}': {}", path, std::strerror(errno));
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

}  // namespace

void check_output_file(const std::string& path, bool streamed) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    check_can_create_beside(path);
    return;
  }
  if (S_ISDIR(st.st_mode)) usage_error("cannot write output '{}': it is a directory", path);
  if (S_ISREG(st.st_mode)) {
    // Root may write anywhere; a file nobody may write is still refused, not replaced.
    if (::access(path.c_str(), W_OK) != 0 || (st.st_mode & 0222) == 0) {
      usage_error("cannot write output '{}': the file is read-only", path);
    }
    if (!streamed) check_can_create_beside(path);  // replaced through a file beside it
    return;
  }
  if (!streamed) {
    usage_error("cannot write output '{}': not a regular file (only .jsonl is written in place)",
                path);
  }
}

}  // namespace cb
