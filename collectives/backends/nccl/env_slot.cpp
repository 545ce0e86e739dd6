#include "collectives/backends/nccl/env_slot.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "common/error.hpp"

extern char** environ;

namespace cb::nccl {

namespace {

bool names(const char* entry, const std::string& name) {
  return std::strncmp(entry, name.c_str(), name.size()) == 0 && entry[name.size()] == '=';
}

}  // namespace

EnvSlot::EnvSlot(std::string name)
    : name_(std::move(name)), placeholder_("_COMMBENCH_UNSET_" + name_) {
  if (const char* v = std::getenv(name_.c_str())) {
    original_ = v;
  } else if (!std::getenv(placeholder_.c_str())) {
    ::setenv(placeholder_.c_str(), "", 1);  // the entry later stores swap in and out
  }
}

void EnvSlot::set(const std::string& value) {
  store(name_ + "=" + value);
}

void EnvSlot::clear() {
  store(placeholder_ + "=");
}

void EnvSlot::store(const std::string& entry) {
  const char* text = strings_.insert(entry).first->c_str();
  for (const std::string* which : {&name_, &placeholder_}) {
    for (char** e = environ; e && *e; ++e) {
      if (names(*e, *which)) {
        std::atomic_ref<char*>(*e).store(const_cast<char*>(text), std::memory_order_release);
        return;
      }
    }
  }
  runtime_error("internal: the environment entry of {} has gone", name_);
}

}  // namespace cb::nccl
