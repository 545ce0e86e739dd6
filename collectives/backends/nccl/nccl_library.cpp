#include "collectives/backends/nccl/nccl_library.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <glob.h>
#include <link.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

namespace cb::nccl {

namespace {

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

bool is_directory(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

// Natural order, so version numbers in names compare as numbers (python3.12 after python3.9).
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) &&
        std::isdigit(static_cast<unsigned char>(b[j]))) {
      std::size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      unsigned long x = std::stoul(a.substr(i, ie - i)), y = std::stoul(b.substr(j, je - j));
      if (x != y) return x < y;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

std::vector<std::string> glob_files(const std::string& pattern) {
  std::vector<std::string> out;
  glob_t g{};
  if (::glob(pattern.c_str(), 0, nullptr, &g) == 0) {
    for (std::size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  }
  ::globfree(&g);
  // Newest first where names carry versions (cuda-13.0 before cuda-12.4).
  std::sort(out.begin(), out.end(),
            [](const std::string& a, const std::string& b) { return natural_less(b, a); });
  return out;
}

// Where dlopen actually found the library.
std::string loaded_path(void* handle, const std::string& fallback) {
  struct link_map* map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name) {
    return map->l_name;
  }
  return fallback;
}

template <typename Fn>
void resolve(void* handle, const char* name, Fn& slot, std::vector<std::string>* missing) {
  slot = reinterpret_cast<Fn>(::dlsym(handle, name));
  if (!slot && missing) missing->push_back(name);
}

// Checks and binds an opened handle; returns the error text, empty on success.
std::string bind_symbols(void* handle, const std::string& path, Library& lib) {
  Functions& f = lib.fn;
  resolve(handle, "ncclGetVersion", f.GetVersion, nullptr);
  if (!f.GetVersion) return fmt::format("{} is not NCCL: it has no ncclGetVersion", path);
  int code = 0;
  if (int rc = f.GetVersion(&code); rc != kSuccess) {
    return fmt::format("ncclGetVersion in {} failed with {}", path, result_name(rc));
  }
  lib.version = decode_version(code);
  if (lib.code() < kMinimumVersion) {
    return fmt::format(
        "NCCL {} at {} is too old: commbench needs NCCL {} or newer (non-blocking "
        "communicators, ncclCommInitRankConfig)",
        lib.version.text(), path, decode_version(kMinimumVersion).text());
  }
  std::vector<std::string> missing;
  resolve(handle, "ncclGetUniqueId", f.GetUniqueId, &missing);
  resolve(handle, "ncclCommInitRankConfig", f.CommInitRankConfig, &missing);
  resolve(handle, "ncclCommFinalize", f.CommFinalize, &missing);
  resolve(handle, "ncclCommDestroy", f.CommDestroy, &missing);
  resolve(handle, "ncclCommAbort", f.CommAbort, &missing);
  resolve(handle, "ncclCommGetAsyncError", f.CommGetAsyncError, &missing);
  resolve(handle, "ncclGetErrorString", f.GetErrorString, &missing);
  resolve(handle, "ncclGetLastError", f.GetLastError, &missing);
  resolve(handle, "ncclCommCount", f.CommCount, &missing);
  resolve(handle, "ncclCommUserRank", f.CommUserRank, &missing);
  resolve(handle, "ncclAllReduce", f.AllReduce, &missing);
  resolve(handle, "ncclBroadcast", f.Broadcast, &missing);
  resolve(handle, "ncclReduce", f.Reduce, &missing);
  resolve(handle, "ncclAllGather", f.AllGather, &missing);
  resolve(handle, "ncclReduceScatter", f.ReduceScatter, &missing);
  resolve(handle, "ncclSend", f.Send, &missing);
  resolve(handle, "ncclRecv", f.Recv, &missing);
  resolve(handle, "ncclGroupStart", f.GroupStart, &missing);
  resolve(handle, "ncclGroupEnd", f.GroupEnd, &missing);
  if (!missing.empty()) {
    std::string names;
    for (const auto& m : missing) names += (names.empty() ? "" : ", ") + m;
    return fmt::format("NCCL {} at {} lacks {}", lib.version.text(), path, names);
  }
  if (lib.at_least(2, 28)) {  // older releases may export experimental versions
    resolve(handle, "ncclAlltoAll", f.AlltoAll, nullptr);
    resolve(handle, "ncclGather", f.Gather, nullptr);
    resolve(handle, "ncclScatter", f.Scatter, nullptr);
  }
  resolve(handle, "ncclResetDebugInit", f.ResetDebugInit, nullptr);
  return "";
}

std::mutex g_mu;
std::map<std::string, LoadResult>& cache() {
  static std::map<std::string, LoadResult> c;
  return c;
}

// Opens `path` (a name dlopen searches, or a file); on failure returns the dlerror text.
LoadResult open_and_bind(const std::string& path, const std::string& source, ErrorKind kind,
                         std::string* dl_error) {
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = ::dlerror();
    if (dl_error) *dl_error = e ? e : "unknown error";
    return {nullptr,
            fmt::format("cannot load NCCL from {} ({}): {}", path, source, e ? e : "unknown error"),
            kind};
  }
  auto lib = std::make_unique<Library>();
  lib->path = loaded_path(handle, path);
  std::string error = bind_symbols(handle, lib->path, *lib);
  if (!error.empty()) {
    // Keep the handle: a half-initialised NCCL is never unloaded safely.
    return {nullptr, fmt::format("{} ({})", error, source), kind};
  }
  return {lib.release(), "", kind};  // lives for the process, like the library itself
}

}  // namespace

PlaceEnvironment place_environment() {
  PlaceEnvironment e;
  e.cuda_home = env_or_empty("CUDA_HOME");
  e.cuda_path = env_or_empty("CUDA_PATH");
  e.virtual_env = env_or_empty("VIRTUAL_ENV");
  e.conda_prefix = env_or_empty("CONDA_PREFIX");
  e.home = env_or_empty("HOME");
  return e;
}

std::vector<std::string> known_places(const PlaceEnvironment& env) {
  std::vector<std::string> patterns;
  auto toolkit = [&](const std::string& root) {
    if (root.empty()) return;
    for (const char* sub : {"lib64", "lib", "targets/*/lib"}) {
      patterns.push_back(fmt::format("{}/{}/{}", root, sub, kSoname));
    }
  };
  toolkit(env.cuda_home);
  toolkit(env.cuda_path);
  for (const auto& r : env.system_roots) toolkit(r);
  auto python = [&](const std::string& lib_dir) {
    if (lib_dir.empty()) return;
    for (const char* pkgs : {"site-packages", "dist-packages"}) {
      patterns.push_back(fmt::format("{}/python3*/{}/nvidia/nccl/lib/{}", lib_dir, pkgs, kSoname));
    }
  };
  if (!env.virtual_env.empty()) python(env.virtual_env + "/lib");
  if (!env.conda_prefix.empty()) {
    patterns.push_back(fmt::format("{}/lib/{}", env.conda_prefix, kSoname));
    python(env.conda_prefix + "/lib");
  }
  if (!env.home.empty()) python(env.home + "/.local/lib");
  for (const auto& r : env.python_roots) python(r);

  std::vector<std::string> out;
  for (const auto& p : patterns) {
    for (auto& f : glob_files(p)) {
      if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(std::move(f));
    }
  }
  return out;
}

LoadResult load_file(const std::string& given, const std::string& source, ErrorKind kind) {
  std::string path = is_directory(given) ? given + "/" + kSoname : given;
  const std::string key = path + "\n" + source;
  std::lock_guard lock(g_mu);
  if (auto it = cache().find(key); it != cache().end()) return it->second;
  LoadResult r;
  if (!exists(path)) {
    r = {nullptr, fmt::format("cannot load NCCL from {} ({}): no such file", path, source), kind};
  } else {
    r = open_and_bind(path, source, kind, nullptr);
  }
  cache()[key] = r;
  return r;
}

LoadResult try_load(const std::string& explicit_path) {
  if (!explicit_path.empty()) return load_file(explicit_path, "--nccl-lib", ErrorKind::Usage);
  if (std::string env = env_or_empty("COMMBENCH_NCCL_LIB"); !env.empty()) {
    return load_file(env, "COMMBENCH_NCCL_LIB", ErrorKind::Usage);
  }
  {
    std::lock_guard lock(g_mu);
    if (auto it = cache().find(""); it != cache().end()) return it->second;
  }
  std::string dl_error;
  LoadResult r = open_and_bind(kSoname, "default soname", ErrorKind::Runtime, &dl_error);
  if (!r.library && !dl_error.empty()) {
    // Not found by the dynamic loader: try the known places, first usable one wins.
    std::vector<std::string> places = known_places(place_environment());
    if (!places.empty()) {
      r = load_file(places.front(), "found in a known place", ErrorKind::Runtime);
      for (std::size_t i = 1; i < places.size() && !r.library; ++i) {  // first usable wins
        LoadResult next = load_file(places[i], "found in a known place", ErrorKind::Runtime);
        if (next.library) r = next;
      }
    } else {
      r.error = fmt::format(
          "NCCL not found: dlopen({}) failed ({}) and no {} is in the CUDA toolkit or Python "
          "nvidia-nccl packages; point --nccl-lib or COMMBENCH_NCCL_LIB at it",
          kSoname, dl_error, kSoname);
    }
  }
  std::lock_guard lock(g_mu);
  cache()[""] = r;
  return r;
}

const Library& load(const std::string& explicit_path) {
  LoadResult r = try_load(explicit_path);
  if (!r.library) throw Error(r.kind, r.error);
  return *r.library;
}

}  // namespace cb::nccl
