#include "common/atomic_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/error.hpp"

namespace cb {

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  temp_ = path_ + ".tmp." + std::to_string(::getpid());
  out_.open(temp_, std::ios::binary | std::ios::trunc);
  if (!out_) usage_error("cannot write '{}': {}", path_, std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (!committed_) {
    out_.close();
    std::remove(temp_.c_str());
  }
}

void AtomicFile::commit() {
  out_.flush();
  bool ok = static_cast<bool>(out_);
  out_.close();
  if (!ok || std::rename(temp_.c_str(), path_.c_str()) != 0) {
    std::remove(temp_.c_str());
    committed_ = true;
    runtime_error("cannot write '{}': {}", path_, std::strerror(errno));
  }
  committed_ = true;
}

void write_file_atomically(const std::string& path, const std::string& text) {
  AtomicFile file(path);
  file.stream() << text;
  file.commit();
}

}  // namespace cb
