// A fresh private directory (mkdtemp under $TMPDIR, else /tmp), removed with everything in it.
#pragma once

#include <string>

namespace cb {

class TempDir {
 public:
  TempDir();  // throws a runtime Error when the directory cannot be created
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  // Throws a runtime Error naming the directory, what it is for and the OS error when a small
  // file cannot be written there (a full or read-only file system).
  void check_writable(const std::string& purpose) const;

 private:
  std::string path_;
};

}  // namespace cb
