// Finds, loads and checks libnccl at run time. Order: --nccl-lib PATH, then COMMBENCH_NCCL_LIB,
// then dlopen("libnccl.so.2") (LD_LIBRARY_PATH, rpath, ld.so cache), then known places: the CUDA
// toolkit's lib directories and Python packages' nvidia/nccl/lib (virtualenv, conda, ~/.local,
// system site- and dist-packages). A library is loaded once per process and never unloaded.
#pragma once

#include <string>
#include <vector>

#include "collectives/backends/nccl/nccl_abi.hpp"
#include "common/error.hpp"

namespace cb::nccl {

struct Functions {
  // Required (present from 2.14 on).
  GetVersionFn GetVersion = nullptr;
  GetUniqueIdFn GetUniqueId = nullptr;
  CommInitRankConfigFn CommInitRankConfig = nullptr;
  CommFn CommFinalize = nullptr;
  CommFn CommDestroy = nullptr;
  CommFn CommAbort = nullptr;
  CommGetAsyncErrorFn CommGetAsyncError = nullptr;
  GetErrorStringFn GetErrorString = nullptr;
  GetLastErrorFn GetLastError = nullptr;
  CommIntFn CommCount = nullptr;
  CommIntFn CommUserRank = nullptr;
  AllReduceFn AllReduce = nullptr;
  BroadcastFn Broadcast = nullptr;
  ReduceFn Reduce = nullptr;
  AllGatherFn AllGather = nullptr;
  ReduceScatterFn ReduceScatter = nullptr;
  SendFn Send = nullptr;
  RecvFn Recv = nullptr;
  GroupFn GroupStart = nullptr;
  GroupFn GroupEnd = nullptr;
  // Optional: null where the loaded release lacks them.
  AlltoAllFn AlltoAll = nullptr;  // 2.28
  RootedFn Gather = nullptr;      // 2.28
  RootedFn Scatter = nullptr;     // 2.28
  ResetDebugInitFn ResetDebugInit = nullptr;
};

struct Library {
  std::string path;  // the file dlopen opened
  Version version;
  Functions fn;
  int code() const { return version.code(); }
  bool at_least(int major, int minor, int patch = 0) const {
    return code() >= version_code(major, minor, patch);
  }
};

// Outcome of a load: the library, or one line saying what is wrong and the error kind (usage
// for a library the user named, runtime when the default search finds nothing usable).
struct LoadResult {
  const Library* library = nullptr;
  std::string error;
  ErrorKind kind = ErrorKind::Runtime;
};

// Loads by the documented order; `explicit_path` is --nccl-lib (empty when not given). Results
// are cached per request.
LoadResult try_load(const std::string& explicit_path);
// The same, throwing the error.
const Library& load(const std::string& explicit_path);
// Loads and checks exactly `path` (a file, or a directory holding libnccl.so.2); `source` names
// where the path came from in messages ("--nccl-lib"). Cached per path.
LoadResult load_file(const std::string& path, const std::string& source, ErrorKind kind);

// Environment that decides the known places.
struct PlaceEnvironment {
  std::string cuda_home, cuda_path, virtual_env, conda_prefix, home;
  std::vector<std::string> system_roots = {"/usr/local/cuda", "/usr/local/cuda-*", "/opt/cuda"};
  std::vector<std::string> python_roots = {"/usr/lib", "/usr/lib64", "/usr/local/lib",
                                           "/usr/local/lib64"};
};
PlaceEnvironment place_environment();  // from CUDA_HOME, CUDA_PATH, VIRTUAL_ENV, CONDA_PREFIX, HOME
// Existing libnccl.so.2 files in the known places, in search order.
std::vector<std::string> known_places(const PlaceEnvironment& env);

inline constexpr const char* kSoname = "libnccl.so.2";

}  // namespace cb::nccl
