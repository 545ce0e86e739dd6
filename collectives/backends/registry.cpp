#include "collectives/backends/registry.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <utility>

#include "collectives/backends/mpi/mpi_backend.hpp"
#include "collectives/backends/mpi/mpi_cuda_aware.hpp"
#include "collectives/backends/mpi/mpi_runtime.hpp"
#include "collectives/backends/mpi/mpi_tuning.hpp"
#include "collectives/backends/nccl/nccl_backend.hpp"
#include "collectives/backends/nccl/nccl_choices.hpp"
#include "collectives/backends/nccl/nccl_policy.hpp"
#include "collectives/backends/nccl/nccl_tuning.hpp"
#include "common/error.hpp"
#include "core/watchdog.hpp"
#ifdef COMMBENCH_HAVE_GLOO
#include "collectives/backends/gloo/gloo_backend.hpp"
#include "collectives/backends/gloo/gloo_control.hpp"
#include "collectives/backends/gloo/gloo_transport.hpp"
#endif

namespace cb {

const std::vector<BackendEntry>& backend_registry() {
  static const std::vector<BackendEntry> kEntries = {
      {.name = "mpi",
       .description = "MPI collectives on host memory (device memory with a CUDA-aware MPI)",
       .unavailable_reason =
           [](const BackendOptions& o) {
             // MPI_Init would make each rank a world of its own.
             return o.launch.kind == LaunchInfo::Kind::Env
                        ? std::string("an env:// launcher (torchrun, Kubernetes), not an MPI "
                                      "launcher, started these ranks: use -B gloo (or nccl)")
                        : std::string();
           },
       .create = [](const BackendOptions& o) { return mpi::make_backend(mpi::make_memory(o)); },
       .version_lines = [](const BackendOptions&) { return mpi::version_lines(); },
       .needs_mpi_launcher = true,
       .tuning_files = {{"--emit-ompi-rules",
                         "write an Open MPI coll/tuned dynamic rules file for the mpi results",
                         mpi::ompi_rules_file}}},
#ifdef COMMBENCH_HAVE_GLOO
      {.name = "gloo",
       .description = "Gloo collectives over TCP on host memory",
       .unavailable_reason = [](const BackendOptions&) { return std::string(); },
       .create = [](const BackendOptions& o) { return gloo_backend::make_backend(o); },
       .check_options =
           [](const BackendOptions& o) {
             if (!o.flag("--gloo-iface").empty()) {
               gloo_backend::check_interface(o.flag("--gloo-iface"));
             }
           },
       .flags = {{"--gloo-iface",
                  "network interface for Gloo (default: loopback on one host, else the host "
                  "name's address)"}},
       .local_control =
           [](const LaunchInfo& launch, double timeout_seconds) {
             return gloo_backend::make_file_store_control(launch.store_dir, launch.rank,
                                                          launch.size, timeout_seconds);
           },
       .rendezvous_control =
           [](Control& rendezvous, const std::string& address, double timeout_seconds) {
             return gloo_backend::make_rendezvous_control(rendezvous, address, timeout_seconds);
           }},
#endif
      // Built with or without CUDA; without, it reports that
      // (collectives/backends/nccl/no_cuda.cpp).
      {.name = "nccl",
       .description = "NCCL collectives on GPU memory (libnccl loaded at run time)",
       .unavailable_reason = nccl::unavailable_reason,
       .create = nccl::make_backend,
       .check_options =
           [](const BackendOptions& o) { nccl::cuda_graph_calls(o.flag("--cuda-graph")); },
       .apply_choices = nccl::apply_run_choices,
       .version_lines =
           [](const BackendOptions& o) { return nccl::version_lines(o.flag("--nccl-lib")); },
       .tuning_files = {{"--emit-nccl-tuner",
                         "write an NCCL tuner-plugin configuration (CSV) for the nccl results",
                         nccl::nccl_tuner_file}},
       .flags = {{"--nccl-lib",
                  "libnccl to load (file or directory; default COMMBENCH_NCCL_LIB, then "
                  "search)",
                  true},
                 {"--cuda-graph",
                  "N: capture N calls of each case in a CUDA graph and time its launches "
                  "(time_us stays per call), as PyTorch with CUDA graphs runs them"}}},
  };
  return kEntries;
}

const BackendEntry* local_control_backend() {
  for (const auto& e : backend_registry()) {
    if (e.local_control) return &e;
  }
  return nullptr;
}

const BackendEntry* find_backend(const std::string& name) {
  for (const auto& e : backend_registry()) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

std::string backend_names() {
  std::vector<std::string> names;
  for (const auto& e : backend_registry()) names.push_back(e.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

BackendChoice choose_default_backends(const DefaultFacts& f) {
  BackendChoice c;
  if (f.nccl_unavailable.empty()) {
    c.names = {"nccl"};
    c.why = "a GPU is visible and NCCL loads";
    if (!f.mpi_can_start) {
      c.why += "; ranks started without an MPI launcher cannot run mpi";
    } else if (f.mpi_cuda_aware) {
      c.names.push_back("mpi");
      c.device_memory = true;
      c.why += fmt::format(
          ", and the MPI moves GPU memory itself ({}), so mpi beside it on device "
          "memory",
          f.mpi_cuda_how);
    } else if (!f.mpi_cuda_how.empty()) {
      c.why += fmt::format("; mpi not beside it: the MPI is not CUDA-aware ({})", f.mpi_cuda_how);
    }
    return c;
  }
  for (const auto& name : f.cpu_backends) {
    if (name == "mpi" && !f.mpi_can_start) continue;
    c.names.push_back(name);
  }
  if (c.names.empty()) c.names.push_back("mpi");
  c.why = fmt::format("no GPU backend here (nccl: {}), so every CPU backend side by side",
                      f.nccl_unavailable);
  if (!f.mpi_can_start) c.why = "ranks started without an MPI launcher run gloo only";
  return c;
}

BackendChoice default_backends(const LaunchInfo& launch, const BackendOptions& options) {
  DefaultFacts f;
  const BackendEntry* nccl = find_backend("nccl");
  f.nccl_unavailable = nccl ? why_unavailable(*nccl, options) : std::string("not in this build");
  for (const char* name : {"mpi", "gloo"}) {
    const BackendEntry* e = find_backend(name);
    if (e && why_unavailable(*e, options).empty()) f.cpu_backends.push_back(name);
  }
  f.mpi_can_start = launch.kind != LaunchInfo::Kind::Local && launch.kind != LaunchInfo::Kind::Env;
  // Asked only on a GPU machine: the parent, before any rank exists, must not initialise MPI.
  if (f.nccl_unavailable.empty() && f.mpi_can_start) {
    mpi::CudaSupport s = launch.kind == LaunchInfo::Kind::Single ? mpi::cuda_support_before_launch()
                                                                 : mpi::cuda_support();
    f.mpi_cuda_aware = s.supported;
    f.mpi_cuda_how = s.how;
  }
  return choose_default_backends(f);
}

std::string why_unavailable(const BackendEntry& entry, const BackendOptions& options) {
  try {
    return entry.unavailable_reason(options);
  } catch (const Error& e) {
    return e.what();
  }
}

void check_backend_options(const BackendOptions& options) {
  for (const auto& e : backend_registry()) {
    if (e.check_options) e.check_options(options);
  }
}

void apply_run_choices(const RunChoices& choices, SweepOptions& sweep) {
  for (const auto& e : backend_registry()) {
    if (e.apply_choices) e.apply_choices(choices, sweep);
  }
}

const std::vector<TuningFile>& tuning_files() {
  static const std::vector<TuningFile> kFiles = [] {
    std::vector<TuningFile> files;
    for (const auto& e : backend_registry()) {
      files.insert(files.end(), e.tuning_files.begin(), e.tuning_files.end());
    }
    return files;
  }();
  return kFiles;
}

std::vector<std::string> backend_version_lines(const BackendOptions& options) {
  std::vector<std::string> lines;
  for (const auto& e : backend_registry()) {
    if (!e.version_lines) continue;
    for (auto& line : e.version_lines(options)) lines.push_back(std::move(line));
  }
  return lines;
}

BackendChoice resolve_backends(const std::vector<std::string>& requested, bool given,
                               const BackendOptions& bo) {
  if (!given) return default_backends(bo.launch, bo);
  BackendChoice c;
  for (const auto& n : requested) {
    if (!find_backend(n)) {
      usage_error("unknown backend '{}': this build offers {}", n, backend_names());
    }
    if (std::find(c.names.begin(), c.names.end(), n) == c.names.end()) c.names.push_back(n);
  }
  if (c.names.empty()) {
    usage_error("empty --backends list: this build offers {}", backend_names());
  }
  return c;
}

void create_backends(const std::vector<std::string>& names, const BackendOptions& o,
                     Watchdog& watchdog, std::vector<std::unique_ptr<Backend>>& backends) {
  for (const auto& name : names) {
    const BackendEntry* entry = find_backend(name);
    watchdog.arm(fmt::format("{} communicator set-up", name));
    if (std::string why = entry->unavailable_reason(o); !why.empty()) {
      runtime_error("backend {} cannot run here: {}", name, why);
    }
    backends.push_back(entry->create(o));
  }
  watchdog.disarm();
}

}  // namespace cb
