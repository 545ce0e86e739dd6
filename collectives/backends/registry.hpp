// The backends this build offers, one entry each (backend_entry.hpp), made in the backend's own
// folder (NAME/NAME_entry.cpp) and listed by one line in registry.cpp; and what is asked of them
// all together: the default choice, the checks of every backend's options, creating the chosen.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collectives/backend.hpp"
#include "collectives/backends/backend_entry.hpp"
#include "collectives/backends/backend_options.hpp"
#include "core/process_start.hpp"

namespace cb {

// The registered backend offering local_control, or null.
const BackendEntry* local_control_backend();
// The registered backend offering launcher_control, or null.
const BackendEntry* launcher_control_backend();

// unavailable_reason for listing and for choosing defaults, where a backend nobody asked for must
// not stop the command: a usage error (a COMMBENCH_NCCL_LIB that is not a library) becomes the
// reason instead.
std::string why_unavailable(const BackendEntry& entry, const BackendOptions& options);

// What runs without -B, and why (for the run's header), from the entries' facts: with a GPU
// backend that can run here (nccl), that one, plus each CPU backend on device memory whose
// library moves GPU memory itself (a CUDA-aware MPI); without one, every CPU backend side by side
// (mpi, which re-executes under the MPI launcher when none started this process, and gloo).
// Ranks of the local launcher or of an env:// launcher run no backend that needs the MPI
// launcher.
struct BackendChoice {
  std::vector<std::string> names;
  std::string why;
  bool device_memory = false;  // the run's buffers go on the GPU (nccl with mpi beside it)
};
BackendChoice default_backends(const LaunchInfo& launch, const BackendOptions& options);

// The facts the default depends on, one per registered backend in registry order, gathered by
// default_backends, so that the rule itself can be tested on any machine.
struct BackendFacts {
  std::string name;
  bool gpu = false;
  std::string library_name;
  std::string unavailable;  // empty: it can run here
  bool needs_mpi_launcher = false;
  bool device_capable = false;  // it has device_support
  DeviceSupport device;         // asked only where a GPU backend runs and this one can start
};
struct DefaultFacts {
  std::vector<BackendFacts> backends;
  bool mpi_can_start = true;  // not a rank of the local launcher or of an env:// launcher
};
BackendChoice choose_default_backends(const DefaultFacts& facts);
// Whether any of `backends` keeps its buffers on the GPU (BackendEntry::gpu).
bool runs_on_gpu(const std::vector<std::string>& backends);

const std::vector<BackendEntry>& backend_registry();
const BackendEntry* find_backend(const std::string& name);
std::string backend_names();  // "mpi, gloo, nccl" as built

// Every registered backend's check_options / check_choices / version_lines, in registry order.
void check_backend_options(const BackendOptions& options);
// Every backend's tuning_files, in registry order.
const std::vector<TuningFile>& tuning_files();
// One rule for every option a backend declares (a flag, a tuning file): given for a run whose
// backends do not include it, it could not take effect, so it is a usage error.
void check_own_options(const RunChoices& choices);
// check_own_options, then every backend's check_choices.
void check_run_choices(const RunChoices& choices);
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
