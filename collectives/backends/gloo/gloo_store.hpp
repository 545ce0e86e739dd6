// Rendezvous stores for Gloo.
//
// ControlStore runs the rendezvous over the run's control channel (MPI under mpirun/srun, a
// file-store Gloo context under the local launcher), so no shared file system, Redis or extra
// TCP server is needed. Its set() is collective: Gloo's connectFullMesh has every rank set its
// keys in the same order before it reads other ranks' keys, so an allgather per set() gives
// every rank every key it will ask for.
#pragma once

#include <gloo/rendezvous/store.h>

#include <map>
#include <string>
#include <vector>

#include "collectives/backend.hpp"

namespace cb::gloo_backend {

class ControlStore : public ::gloo::rendezvous::Store {
 public:
  explicit ControlStore(Control& control) : control_(control) {}

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds&) override {
    wait(keys);
  }

 private:
  Control& control_;
  std::map<std::string, std::vector<char>> values_;
};

// Encodes a key and its value into one string and back (exposed for tests).
std::string encode_entry(const std::string& key, const std::vector<char>& data);
std::pair<std::string, std::vector<char>> decode_entry(const std::string& entry);

}  // namespace cb::gloo_backend
