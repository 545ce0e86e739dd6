// The backends this build offers. Each backend folder contributes one entry in registry.cpp.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collectives/backend.hpp"
#include "collectives/backends/backend_options.hpp"
#include "collectives/backends/tuning.hpp"
#include "collectives/engine/plan.hpp"
#include "core/process_start.hpp"

namespace cb {

// A flag a backend declares for `run` and `tune` (and `version`, where the backend has version
// lines and the flag is marked in_version).
struct BackendFlag {
  std::string name;  // its long name, "--gloo-iface"
  std::string help;
  bool in_version = false;  // `version` offers it too (it chooses what version reports)
};

// What a run's flags chose, for each backend's own checks and defaults before anything runs.
struct RunChoices {
  std::vector<std::string> backends;  // as resolved from -B
  MemoryKind memory = MemoryKind::Host;
  bool memory_given = false;     // --memory
  bool max_bytes_given = false;  // -e
  int gpus = 1;                  // --gpus
};

struct BackendEntry {
  std::string name;
  std::string description;
  // Whether it can run here and now (a library loads, a device is visible); empty when it can,
  // else the reason it cannot.
  std::function<std::string(const BackendOptions&)> unavailable_reason;
  std::function<std::unique_ptr<Backend>(const BackendOptions&)> create;
  // Checks of this backend's own options, when the flags are read (may be empty).
  std::function<void(const BackendOptions&)> check_options = {};
  // Checks of the run's choices as far as they concern this backend, and its defaults for the
  // sweep (may be empty). Called for every registered backend, chosen or not.
  std::function<void(const RunChoices&, SweepOptions&)> apply_choices = {};
  // Lines this backend adds to `commbench version` (may be empty).
  std::function<std::vector<std::string>(const BackendOptions&)> version_lines = {};
  // Its ranks must be started by the MPI launcher (the local launcher cannot start them).
  bool needs_mpi_launcher = false;
  // Files it can write from `tune` advice (--emit-...).
  std::vector<TuningFile> tuning_files = {};
  // Flags of its own, read back through BackendOptions::flag.
  std::vector<BackendFlag> flags = {};
  // The control channel for ranks of the local launcher, over the launcher's file store (at most
  // one backend offers it; without one, every run needs the MPI launcher).
  std::function<std::unique_ptr<Control>(const LaunchInfo&, double timeout_seconds)> local_control =
      {};
  // The control channel for ranks of an env:// launcher (torchrun, Kubernetes), built over the
  // rendezvous star through rank 0 (good for allgathers only), this rank listening at `address`.
  // The backend offering local_control offers this too.
  std::function<std::unique_ptr<Control>(Control& rendezvous, const std::string& address,
                                         double timeout_seconds)>
      rendezvous_control = {};
};

// The registered backend offering local_control, or null.
const BackendEntry* local_control_backend();

// unavailable_reason for listing and for choosing defaults, where a backend nobody asked for must
// not stop the command: a usage error (a COMMBENCH_NCCL_LIB that is not a library) becomes the
// reason instead.
std::string why_unavailable(const BackendEntry& entry, const BackendOptions& options);

// What runs without -B, and why (for the run's header): with a usable GPU, nccl, plus mpi on
// device memory where the MPI moves GPU memory itself; without one, every CPU backend side by
// side (mpi, which re-executes under the MPI launcher when none started this process, and gloo).
// Ranks of the local launcher or of an env:// launcher can only run gloo (or nccl).
struct BackendChoice {
  std::vector<std::string> names;
  std::string why;
  bool device_memory = false;  // the run's buffers go on the GPU (nccl with mpi beside it)
};
BackendChoice default_backends(const LaunchInfo& launch, const BackendOptions& options);

// The facts the default depends on, gathered by default_backends, so that the rule itself can be
// tested on any machine.
struct DefaultFacts {
  std::string nccl_unavailable;           // empty: a GPU is visible and NCCL loads
  std::vector<std::string> cpu_backends;  // CPU backends that can run here, registry order
  bool mpi_can_start = true;              // not a rank of the local launcher
  bool mpi_cuda_aware = false;            // asked only when nccl can run and mpi can start
  std::string mpi_cuda_how;               // what was asked and what it answered
};
BackendChoice choose_default_backends(const DefaultFacts& facts);

const std::vector<BackendEntry>& backend_registry();
const BackendEntry* find_backend(const std::string& name);
std::string backend_names();  // "mpi, gloo, nccl" as built

// Every registered backend's check_options / apply_choices / version_lines, in registry order.
void check_backend_options(const BackendOptions& options);
// Every backend's tuning_files, in registry order.
const std::vector<TuningFile>& tuning_files();
void apply_run_choices(const RunChoices& choices, SweepOptions& sweep);
std::vector<std::string> backend_version_lines(const BackendOptions& options);

// The backends -B named (`requested`, duplicates dropped; usage error on unknown names or an
// empty list; `why` empty), or with no -B (`given` false) default_backends for this launch.
BackendChoice resolve_backends(const std::vector<std::string>& requested, bool given,
                               const BackendOptions& options);

// Creates the named backends in order into `backends`, each set-up under the watchdog; one that
// cannot run here is a runtime error naming why (those created before it stay in `backends`, so
// the caller decides when their connections close).
void create_backends(const std::vector<std::string>& names, const BackendOptions& options,
                     Watchdog& watchdog, std::vector<std::unique_ptr<Backend>>& backends);

}  // namespace cb
