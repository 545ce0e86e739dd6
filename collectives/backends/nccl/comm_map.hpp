// The NCCL backend's communicators, one per algorithm choice and shared by the collectives that
// use it. Cases run collective by collective, algorithm by algorithm, so a forced communicator
// is done once another one opens: it is closed (every process together) before the next set-up,
// and at most the default and one forced communicator hold GPU memory. Only live communicators
// are kept: a set-up NCCL refuses or a probe that fails leaves no entry behind. A template over
// the communicator type, so that a test drives it with a fake one and no GPU.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

namespace cb::nccl {

template <typename Comm>  // has close() and failed()
class CommMap {
 public:
  using Create = std::function<std::shared_ptr<Comm>()>;  // null when the set-up failed

  // The live communicator for `algorithm`, made by `create` when there is none; the forced
  // communicators of other algorithms are closed first. Null when `create` fails.
  std::shared_ptr<Comm> acquire(const std::string& algorithm, const Create& create) {
    for (auto it = comms_.begin(); it != comms_.end();) {
      if (it->first != kDefault && it->first != algorithm) {
        it->second->close();
        it = comms_.erase(it);
      } else {
        ++it;
      }
    }
    if (auto it = comms_.find(algorithm); it != comms_.end()) {
      if (!it->second->failed()) return it->second;
      comms_.erase(it);  // aborted by an error: a fresh one is set up
    }
    std::shared_ptr<Comm> made = create();
    if (made) comms_.emplace(algorithm, made);
    return made;
  }

  // Forgets `algorithm`'s communicator (aborted by a failed probe), so no later acquire() or
  // close sees it.
  void drop(const std::string& algorithm) { comms_.erase(algorithm); }

  bool holds(const std::string& algorithm) const { return comms_.count(algorithm) > 0; }
  std::size_t size() const { return comms_.size(); }
  void clear() { comms_.clear(); }

 private:
  static constexpr const char* kDefault = "default";
  std::map<std::string, std::shared_ptr<Comm>> comms_;
};

}  // namespace cb::nccl
