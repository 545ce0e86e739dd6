// The parts of NCCL's C ABI commbench uses, declared here rather than taken from nccl.h so one
// binary can load any libnccl.so.2 at run time. Values and layouts follow NCCL's own header from
// 2.14 to 2.30 (see the README's NCCL section); enums are passed as int.
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "collectives/catalogue/dtype.hpp"

struct ncclComm;     // opaque, as in nccl.h
struct CUstream_st;  // cudaStream_t is a pointer to this

namespace cb::nccl {

using Comm = ncclComm*;
using Stream = CUstream_st*;

// ncclResult_t values.
enum Result : int {
  kSuccess = 0,
  kUnhandledCudaError = 1,
  kSystemError = 2,
  kInternalError = 3,
  kInvalidArgument = 4,
  kInvalidUsage = 5,
  kRemoteError = 6,  // 2.13
  kInProgress = 7,   // 2.14
  kTimeout = 8,      // 2.30
};
// "ncclRemoteError", or "ncclResult 42" for a code this build does not know.
std::string result_name(int result);

// ncclDataType_t and ncclRedOp_t codes.
inline constexpr int kFloat8e4m3 = 10;  // 2.24
inline constexpr int kFloat8e5m2 = 11;  // 2.24
inline constexpr int kBfloat16 = 9;     // 2.10
std::optional<int> datatype_code(DType t);
inline constexpr int kAvg = 4;  // 2.10
std::optional<int> redop_code(ReduceOp op);

// The version code ncclGetVersion returns: MAJOR*10000 + MINOR*100 + PATCH from 2.9 on,
// MAJOR*1000 + MINOR*100 + PATCH before.
struct Version {
  int major = 0, minor = 0, patch = 0;
  int code() const { return major * 10000 + minor * 100 + patch; }  // the 2.9+ encoding
  std::string text() const;                                         // "2.28.9"
};
Version decode_version(int code);
constexpr int version_code(int major, int minor, int patch) {
  return major * 10000 + minor * 100 + patch;
}

// The oldest NCCL commbench drives: non-blocking communicators and ncclCommInitRankConfig.
inline constexpr int kMinimumVersion = version_code(2, 14, 0);

// Opaque, 128 bytes, passed by value to ncclCommInitRankConfig.
struct UniqueId {
  char internal[128];
};
static_assert(sizeof(UniqueId) == 128);

// ncclConfig_t in its newest layout (2.30). Each NCCL release copies min(size, its own sizeof)
// and ignores fields newer than `version`, so make_config() sets both as a client compiled
// against the loaded library's own header would.
struct Config {
  std::size_t size;
  unsigned int magic;
  unsigned int version;
  int blocking;             // 2.14
  int cgaClusterSize;       // 2.17
  int minCTAs;              // 2.17
  int maxCTAs;              // 2.17
  const char* netName;      // 2.17
  int splitShare;           // 2.18
  int trafficClass;         // 2.26
  const char* commName;     // 2.27
  int collnetEnable;        // 2.27
  int CTAPolicy;            // 2.27
  int shrinkShare;          // 2.27
  int nvlsCTAs;             // 2.27
  int nChannelsPerNetPeer;  // 2.28
  int nvlinkCentricSched;   // 2.28
  int graphUsageMode;       // 2.29
  int numRmaCtx;            // 2.29
  int maxP2pPeers;          // 2.30
  int graphStreamOrdering;  // 2.30
};
inline constexpr unsigned int kConfigMagic = 0xcafebeef;
inline constexpr int kConfigUndefInt = INT_MIN;

// sizeof(ncclConfig_t) in the header of NCCL `version_code` (0 below 2.14, which has none).
std::size_t config_size_for(int version_code);
// A config as NCCL_CONFIG_INITIALIZER of that release makes it (every field undefined), with
// `blocking` set.
Config make_config(int version_code, bool blocking);

// Function types, in nccl.h order of appearance.
using GetVersionFn = int (*)(int*);
using GetUniqueIdFn = int (*)(UniqueId*);
using CommInitRankConfigFn = int (*)(Comm*, int nranks, UniqueId id, int rank, Config* config);
using CommFn = int (*)(Comm);  // Finalize, Destroy, Abort
using CommGetAsyncErrorFn = int (*)(Comm, int* async_error);
using GetErrorStringFn = const char* (*)(int result);
using GetLastErrorFn = const char* (*)(Comm);
using CommIntFn = int (*)(Comm, int*);  // Count, UserRank, CuDevice
using AllReduceFn = int (*)(const void*, void*, std::size_t, int type, int op, Comm, Stream);
using BroadcastFn = int (*)(const void*, void*, std::size_t, int type, int root, Comm, Stream);
using ReduceFn = int (*)(const void*, void*, std::size_t, int type, int op, int root, Comm, Stream);
using AllGatherFn = int (*)(const void*, void*, std::size_t sendcount, int type, Comm, Stream);
using ReduceScatterFn = int (*)(const void*, void*, std::size_t recvcount, int type, int op, Comm,
                                Stream);
using AlltoAllFn = int (*)(const void*, void*, std::size_t count, int type, Comm, Stream);
using RootedFn = int (*)(const void*, void*, std::size_t count, int type, int root, Comm,
                         Stream);  // Gather, Scatter
using SendFn = int (*)(const void*, std::size_t, int type, int peer, Comm, Stream);
using RecvFn = int (*)(void*, std::size_t, int type, int peer, Comm, Stream);
using GroupFn = int (*)();
using ResetDebugInitFn = void (*)();

}  // namespace cb::nccl
