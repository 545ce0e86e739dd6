// One environment variable that the main thread changes while NCCL's threads may be reading the
// environment. setenv() can move and free the environment array under a concurrent getenv(), and
// unsetenv() shifts its entries; so the variable gets its own entry in `environ` when the slot
// is made (before the first NCCL call, while no NCCL thread exists) and every later change is one
// pointer store into that entry, as glibc's setenv does for a name it already holds. Unset, the
// entry holds a placeholder name. Strings once stored are never freed (a reader may hold one).
#pragma once

#include <optional>
#include <set>
#include <string>

namespace cb::nccl {

class EnvSlot {
 public:
  explicit EnvSlot(std::string name);  // call before any thread reads the environment
  EnvSlot(const EnvSlot&) = delete;
  EnvSlot& operator=(const EnvSlot&) = delete;

  const std::string& name() const { return name_; }
  // The value when the slot was made.
  const std::optional<std::string>& original() const { return original_; }
  void set(const std::string& value);
  void clear();  // getenv(name) returns null
  void restore() { original_ ? set(*original_) : clear(); }

 private:
  void store(const std::string& entry);

  std::string name_;
  std::string placeholder_;  // the entry's name while unset (outside meta.environment's prefixes)
  std::optional<std::string> original_;
  std::set<std::string> strings_;
};

}  // namespace cb::nccl
