#include "collectives/backends/registry.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <utility>

#include "collectives/backends/mpi/mpi_entry.hpp"
#include "collectives/backends/nccl/nccl_entry.hpp"
#include "common/error.hpp"
#include "core/watchdog.hpp"
#ifdef COMMBENCH_HAVE_GLOO
#include "collectives/backends/gloo/gloo_entry.hpp"
#endif

namespace cb {

// One line per backend; each backend's folder says the rest (NAME_entry.cpp).
const std::vector<BackendEntry>& backend_registry() {
  static const std::vector<BackendEntry> kEntries = {
      mpi_entry(),
#ifdef COMMBENCH_HAVE_GLOO
      gloo_entry(),
#endif
      nccl_entry(),
  };
  return kEntries;
}

const BackendEntry* local_control_backend() {
  for (const auto& e : backend_registry()) {
    if (e.local_control) return &e;
  }
  return nullptr;
}

const BackendEntry* launcher_control_backend() {
  for (const auto& e : backend_registry()) {
    if (e.launcher_control) return &e;
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

namespace {

std::string joined(const std::vector<std::string>& v, const char* sep) {
  return fmt::format("{}", fmt::join(v, sep));
}

// With a GPU backend that runs here: it, and beside it each CPU backend whose library moves GPU
// memory itself.
BackendChoice with_gpu(const BackendFacts& gpu, const DefaultFacts& f) {
  BackendChoice c;
  c.names = {gpu.name};
  c.why = fmt::format("a GPU is visible and {} loads", gpu.library_name);
  for (const auto& b : f.backends) {
    if (b.gpu || !b.device_capable) continue;
    if (b.needs_mpi_launcher && !f.mpi_can_start) {
      c.why += fmt::format("; ranks started without an MPI launcher cannot run {}", b.name);
    } else if (b.device.supported) {
      c.names.push_back(b.name);
      c.device_memory = true;
      c.why +=
          fmt::format(", and {} moves GPU memory itself ({}), so {} beside it on device memory",
                      b.library_name, b.device.how, b.name);
    } else if (!b.device.how.empty()) {
      c.why += fmt::format("; {} not beside it: {} is not CUDA-aware ({})", b.name, b.library_name,
                           b.device.how);
    }
  }
  return c;
}

}  // namespace

BackendChoice choose_default_backends(const DefaultFacts& f) {
  for (const auto& b : f.backends) {
    if (b.gpu && b.unavailable.empty()) return with_gpu(b, f);
  }
  BackendChoice c;
  std::vector<std::string> no_gpu;
  for (const auto& b : f.backends) {
    if (b.gpu) no_gpu.push_back(fmt::format("{}: {}", b.name, b.unavailable));
    if (b.gpu || !b.unavailable.empty() || (b.needs_mpi_launcher && !f.mpi_can_start)) continue;
    c.names.push_back(b.name);
  }
  // None can run: the first CPU backend, which then says why.
  for (const auto& b : f.backends) {
    if (c.names.empty() && !b.gpu) c.names.push_back(b.name);
  }
  c.why = fmt::format("no GPU backend here ({}), so every CPU backend side by side",
                      no_gpu.empty() ? "none in this build" : joined(no_gpu, "; "));
  if (!f.mpi_can_start) {
    c.why = fmt::format("ranks started without an MPI launcher run {} only", joined(c.names, ", "));
  }
  return c;
}

BackendChoice default_backends(const LaunchInfo& launch, const BackendOptions& options) {
  DefaultFacts f;
  f.mpi_can_start = launch.kind != LaunchInfo::Kind::Local && launch.kind != LaunchInfo::Kind::Env;
  bool gpu_runs = false;
  for (const auto& e : backend_registry()) {
    f.backends.push_back({e.name,
                          e.gpu,
                          e.library_name,
                          why_unavailable(e, options),
                          e.needs_mpi_launcher,
                          static_cast<bool>(e.device_support),
                          {}});
    gpu_runs = gpu_runs || (e.gpu && f.backends.back().unavailable.empty());
  }
  // Asked only on a GPU machine: the parent, before any rank exists, must not initialise MPI.
  for (auto& b : f.backends) {
    if (gpu_runs && b.device_capable && (!b.needs_mpi_launcher || f.mpi_can_start)) {
      b.device = find_backend(b.name)->device_support(launch);
    }
  }
  return choose_default_backends(f);
}

bool runs_on_gpu(const std::vector<std::string>& backends) {
  for (const auto& name : backends) {
    const BackendEntry* e = find_backend(name);
    if (e && e->gpu) return true;
  }
  return false;
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

void check_own_options(const RunChoices& choices) {
  for (const std::string& given : choices.own_options) {
    for (const auto& e : backend_registry()) {
      const bool own =
          std::any_of(e.flags.begin(), e.flags.end(), [&](auto& f) { return f.name == given; }) ||
          std::any_of(e.tuning_files.begin(), e.tuning_files.end(),
                      [&](auto& f) { return f.option == given; });
      if (!own || std::count(choices.backends.begin(), choices.backends.end(), e.name)) continue;
      usage_error(
          "{} applies to -B {} only, and this run's backends are {}: add {} to -B or "
          "leave {} out",
          given, e.name, joined(choices.backends, ", "), e.name, given);
    }
  }
}

void check_run_choices(const RunChoices& choices) {
  check_own_options(choices);
  for (const auto& e : backend_registry()) {
    if (e.check_choices) e.check_choices(choices);
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
