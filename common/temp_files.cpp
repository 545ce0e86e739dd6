#include "common/temp_files.hpp"

#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace cb {

namespace {

constexpr std::size_t kSlots = 64;
constexpr std::size_t kPathMax = 4096;

struct Slot {
  std::atomic<bool> used{false};
  char path[kPathMax];
};

std::array<Slot, kSlots>& slots() {
  static std::array<Slot, kSlots> s;
  return s;
}

std::mutex& slots_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

std::string temp_suffix() {
  const char* tag = std::getenv(kTempTagEnv);
  return ".tmp." + std::string(tag && *tag ? tag : std::to_string(::getpid()));
}

void track_temp_file(const std::string& path) {
  if (path.size() >= kPathMax) return;
  std::lock_guard lock(slots_mutex());
  for (auto& s : slots()) {
    if (s.used.load()) continue;
    std::memcpy(s.path, path.c_str(), path.size() + 1);
    s.used.store(true);
    return;
  }
}

void forget_temp_file(const std::string& path) {
  std::lock_guard lock(slots_mutex());
  for (auto& s : slots()) {
    if (s.used.load() && path == s.path) s.used.store(false);
  }
}

void remove_temp_files() noexcept {
  for (auto& s : slots()) {
    if (s.used.load()) ::unlink(s.path);
  }
}

}  // namespace cb
