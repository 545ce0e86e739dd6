// The backends this build offers. Each backend folder contributes one entry in registry.cpp.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "collectives/backend.hpp"
#include "collectives/launch.hpp"

namespace cb {

// Settings a backend may need when it is created.
struct BackendOptions {
  LaunchInfo launch;
  MemoryKind memory = MemoryKind::Host;
};

struct BackendEntry {
  std::string name;
  std::string description;
  // Whether it can run here and now (a library loads, a device is visible); empty when it can,
  // else the reason it cannot.
  std::function<std::string(const BackendOptions&)> unavailable_reason;
  std::function<std::unique_ptr<Backend>(const BackendOptions&)> create;
};

const std::vector<BackendEntry>& backend_registry();
const BackendEntry* find_backend(const std::string& name);
std::string backend_names();  // "mpi, gloo, nccl" as built

}  // namespace cb
