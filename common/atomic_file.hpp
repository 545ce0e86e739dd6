// A file that appears under its final name only when committed: written to a temporary name in
// the same directory, then renamed. Destroyed uncommitted, it leaves nothing behind; the
// temporary name is also removed when the run times out or is interrupted (temp_files.hpp).
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
  // Writes, syncs, closes and renames into place; throws a runtime Error naming the file and the
  // OS error (and leaves nothing behind) when any of it fails.
  void commit();

 private:
  void discard() noexcept;

  std::string path_;
  std::string temp_;
  int fd_ = -1;
  std::ostringstream out_;
};

// Writes `text` to `path` atomically.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace cb
