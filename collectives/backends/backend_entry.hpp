// What the registry knows of one backend: its name, whether and how it runs here, its own flags,
// checks and files, and what the rest of commbench asks of it (the default choice, the control
// channels, the roof model, probe links' messages). Each backend's folder makes its entry
// (NAME/NAME_entry.cpp); registry.cpp lists them.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collectives/backend.hpp"
#include "collectives/backends/backend_options.hpp"
#include "collectives/backends/peer_messages.hpp"
#include "collectives/backends/tuning.hpp"
#include "core/control.hpp"
#include "core/process_start.hpp"

namespace cb {

// A flag a backend declares for `run` and `tune` (and `version`, where the backend has version
// lines and the flag is marked in_version).
struct BackendFlag {
  std::string name;  // its long name, "--gloo-iface"
  std::string help;
  bool in_version = false;  // `version` offers it too (it chooses what version reports)
  bool in_replay = true;    // `replay` takes it too (false: it applies to run's cases alone)
};

// What a run's flags chose, for each backend's own checks before anything runs.
struct RunChoices {
  std::vector<std::string> backends;  // as resolved from -B
  MemoryKind memory = MemoryKind::Host;
  bool memory_given = false;  // --memory
  int gpus = 1;               // --gpus
  // The backends' own options given (their flags, tune's --emit-* of their tuning files), by
  // long name: each belongs to one backend and takes effect only where that backend runs.
  std::vector<std::string> own_options = {};
};

// Whether a library moves GPU memory itself (a CUDA-aware MPI), and what it was asked and said.
struct DeviceSupport {
  bool supported = false;
  std::string how;
};

// Which roof (report/roof) a backend's records are held against: the GPUs' own links and the
// NICs with or without GPUDirect RDMA, or host memory; None: no model, the roof is unknown.
enum class RoofModel { None, HostMemory, GpuLinks };

struct BackendEntry {
  std::string name;
  std::string description;
  // Whether it can run here and now (a library loads, a device is visible); empty when it can,
  // else the reason it cannot.
  std::function<std::string(const BackendOptions&)> unavailable_reason;
  std::function<std::unique_ptr<Backend>(const BackendOptions&)> create;
  // Checks of this backend's own options, when the flags are read (may be empty).
  std::function<void(const BackendOptions&)> check_options = {};
  // Checks of the run's choices as far as they concern this backend (may be empty). Called for
  // every registered backend, chosen or not.
  std::function<void(const RunChoices&)> check_choices = {};
  // Lines this backend adds to `commbench version` (may be empty).
  std::function<std::vector<std::string>(const BackendOptions&)> version_lines = {};
  // Its ranks must be started by the MPI launcher (the local launcher cannot start them).
  bool needs_mpi_launcher = false;
  // Its buffers live on the GPU (device memory unless --memory says otherwise, -e 1 GiB). Without
  // -B, a GPU backend that can run here runs alone, or with the CPU backends whose device_support
  // says they move GPU memory themselves; else every CPU backend runs (default_backends).
  bool gpu = false;
  // Its library as the default's reason names it: "NCCL", "the MPI".
  std::string library_name = {};
  // A CPU backend's answer to whether its library moves GPU memory itself, asked only where a GPU
  // backend runs; before any rank exists (`launch` Single) without initialising the library.
  std::function<DeviceSupport(const LaunchInfo& launch)> device_support = {};
  // The roof its records are held against.
  RoofModel roof = RoofModel::None;
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
  // The control channel for ranks an MPI launcher started (mpirun, srun): at most one backend
  // offers it; without one, a run under an MPI launcher cannot start.
  std::function<std::unique_ptr<Control>()> launcher_control = {};
  // Messages between two ranks on its own transport (probe links --transport NAME); absent where
  // this build has none.
  std::optional<PeerMessagesOffer> peer_messages = {};
};

}  // namespace cb
