// What a backend is told when it is created: how the run was started, its memory, control
// channel, watchdog and choices, and each backend's own flags.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "collectives/backend.hpp"
#include "collectives/catalogue/catalogue.hpp"
#include "collectives/catalogue/dtype.hpp"
#include "core/control.hpp"
#include "core/process_start.hpp"

namespace cb {

class Watchdog;

// Settings a backend may need when it is created.
struct BackendOptions {
  LaunchInfo launch;
  MemoryKind memory = MemoryKind::Host;
  // The run's control channel (null outside `run`); backends may bootstrap through it.
  Control* control = nullptr;
  double timeout_seconds = 300;  // --timeout
  bool memory_explicit = false;  // --memory was given; else each backend's default
  Watchdog* watchdog = nullptr;  // lets a backend abort its communicators when it fires
  // What the run will use, so a backend can check forced algorithms before measuring.
  std::vector<DType> dtypes;
  std::vector<ReduceOp> ops;
  bool report_choice = false;  // capture what the library chose for "default" (nccl)
  int gpus_per_process = 1;    // --gpus: GPUs each process drives (nccl)
  // Each backend's own flags (BackendEntry::flags) as given, by long name; absent or empty
  // when not given.
  std::map<std::string, std::string> flags;
  const std::string& flag(const std::string& long_name) const;
};

}  // namespace cb
