#include "collectives/launch/temp_dir.hpp"

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

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace cb
