// A file that appears under its final name only when committed: written to a temporary name in
// the same directory, then renamed. Destroyed uncommitted, it leaves nothing behind.
#pragma once

#include <fstream>
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
  void commit();  // flush, close and rename into place

 private:
  std::string path_;
  std::string temp_;
  std::ofstream out_;
  bool committed_ = false;
};

// Writes `text` to `path` atomically.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace cb
