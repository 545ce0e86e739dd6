// The backends this build offers. Each backend folder contributes one entry in registry.cpp.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "collectives/backend.hpp"
#include "collectives/launch.hpp"

namespace cb {

class Watchdog;

// Settings a backend may need when it is created.
struct BackendOptions {
  LaunchInfo launch;
  MemoryKind memory = MemoryKind::Host;
  // The run's control channel (null outside `run`); backends may bootstrap through it.
  Control* control = nullptr;
  double timeout_seconds = 300;  // --timeout
  std::string gloo_iface;        // --gloo-iface
  bool memory_explicit = false;  // --memory was given; else each backend's default
  Watchdog* watchdog = nullptr;  // lets a backend abort its communicators when it fires
  // What the run will use, so a backend can check forced algorithms before measuring.
  std::vector<DType> dtypes;
  std::vector<ReduceOp> ops;
  bool report_choice = false;  // capture what the library chose for "default" (nccl)
  std::string nccl_library;    // --nccl-lib; empty: COMMBENCH_NCCL_LIB, then the search
  int gpus_per_process = 1;    // --gpus: GPUs each process drives (nccl)
};

struct BackendEntry {
  std::string name;
  std::string description;
  // Whether it can run here and now (a library loads, a device is visible); empty when it can,
  // else the reason it cannot.
  std::function<std::string(const BackendOptions&)> unavailable_reason;
  std::function<std::unique_ptr<Backend>(const BackendOptions&)> create;
};

// unavailable_reason for listing and for choosing defaults, where a backend nobody asked for must
// not stop the command: a usage error (a COMMBENCH_NCCL_LIB that is not a library) becomes the
// reason instead.
std::string why_unavailable(const BackendEntry& entry, const BackendOptions& options);

// What runs without -B, and why (for the run's header): with a usable GPU, nccl; without one,
// every CPU backend side by side (mpi, which re-executes under the MPI launcher when none started
// this process, and gloo). Ranks of the local launcher can only run gloo.
struct BackendChoice {
  std::vector<std::string> names;
  std::string why;
};
BackendChoice default_backends(const LaunchInfo& launch, const BackendOptions& options);

const std::vector<BackendEntry>& backend_registry();
const BackendEntry* find_backend(const std::string& name);
std::string backend_names();  // "mpi, gloo, nccl" as built

}  // namespace cb
