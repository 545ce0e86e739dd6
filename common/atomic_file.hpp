// A file that appears under its final name only when committed, whole, and that no death of the
// writer leaves behind. Where the file system allows it, it is written as an unnamed file
// (O_TMPFILE) in the directory of its target and named only at commit: linked to a temporary
// name beside the target and at once renamed over it, so that the replacement stays atomic and a
// death at any point, SIGKILL included, leaves at most that name for the microseconds between the
// two calls (and the commbench that started the ranks removes a rank's, see temp_files.hpp).
// Where the file system refuses unnamed files (some network and FUSE file systems), it is written
// to the temporary name from the start, as before O_TMPFILE: that name is removed on every
// failure, timeout and interrupt, but a SIGKILL of the process that writes it leaves it.
// Stale temporary names are never removed by process id: on a shared file system the id may be
// a live process's on another host.
#pragma once

#include <sstream>
#include <string>

namespace cb {

class AtomicFile {
 public:
  explicit AtomicFile(std::string path);  // throws a usage Error when the directory is unwritable
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  std::ostream& stream() { return out_; }
  const std::string& path() const { return path_; }
  // Whether the file has no name until commit (false: the fallback, a temporary name).
  bool unnamed() const { return unnamed_; }
  // Writes, syncs, names and renames into place; throws a runtime Error naming the file and the
  // OS error (and leaves nothing behind) when any of it fails.
  void commit();

 private:
  void write_out();
  void name_unnamed();
  void discard() noexcept;

  std::string path_;
  std::string target_;  // what is replaced: path_, or what a symbolic link there points to
  std::string temp_;    // the temporary name beside target_
  int fd_ = -1;
  bool unnamed_ = false;
  bool named_ = false;  // temp_ may exist on disk (tracked for removal)
  std::ostringstream out_;
};

// Writes `text` to `path` atomically.
void write_file_atomically(const std::string& path, const std::string& text);

// Opens an unnamed file for writing in the directory `target` is in (O_TMPFILE); -1 with errno
// set when that fails. COMMBENCH_TEST_NO_TMPFILE=1 (test suite only) makes it fail as a file
// system without unnamed files does (EOPNOTSUPP), so that the fallback runs anywhere.
int open_unnamed_beside(const std::string& target);

// Whether open_unnamed_beside's `error` means the file system (or kernel) has no unnamed files,
// so that a named temporary file must be used instead, rather than that the directory cannot be
// written at all.
bool unnamed_files_refused(int error);

}  // namespace cb
