// A one-line progress display on stderr: "[ 12/240] allreduce 4 MiB float sum".
#pragma once

#include <string>

namespace cb {

class Progress {
 public:
  // mode: auto (only when stderr is a terminal), always, never.
  Progress(const std::string& mode, bool enabled_rank);
  void update(std::size_t done, std::size_t total, const std::string& what);
  void clear();  // erases the line before other output

 private:
  bool on_ = false;
  std::size_t width_ = 0;
};

}  // namespace cb
