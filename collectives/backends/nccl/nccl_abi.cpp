#include "collectives/backends/nccl/nccl_abi.hpp"

#include <fmt/format.h>

namespace cb::nccl {

std::string result_name(int result) {
  static const char* const kNames[] = {
      "ncclSuccess",       "ncclUnhandledCudaError", "ncclSystemError",
      "ncclInternalError", "ncclInvalidArgument",    "ncclInvalidUsage",
      "ncclRemoteError",   "ncclInProgress",         "ncclTimeout"};
  if (result >= 0 && result < static_cast<int>(std::size(kNames))) return kNames[result];
  return fmt::format("ncclResult {}", result);
}

std::optional<int> datatype_code(DType t) {
  switch (t) {
    case DType::Int8:
      return 0;
    case DType::Uint8:
      return 1;
    case DType::Int32:
      return 2;
    case DType::Uint32:
      return 3;
    case DType::Int64:
      return 4;
    case DType::Uint64:
      return 5;
    case DType::Half:
      return 6;
    case DType::Float:
      return 7;
    case DType::Double:
      return 8;
    case DType::BFloat16:
      return kBfloat16;
    case DType::Fp8E4M3:
      return kFloat8e4m3;
    case DType::Fp8E5M2:
      return kFloat8e5m2;
  }
  return std::nullopt;
}

std::optional<int> redop_code(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return 0;
    case ReduceOp::Prod:
      return 1;
    case ReduceOp::Max:
      return 2;
    case ReduceOp::Min:
      return 3;
    case ReduceOp::Avg:
      return kAvg;
    case ReduceOp::None:
      return std::nullopt;
  }
  return std::nullopt;
}

std::string Version::text() const {
  return fmt::format("{}.{}.{}", major, minor, patch);
}

Version decode_version(int code) {
  Version v;
  if (code >= 10000) {  // 2.9 and later
    v.major = code / 10000;
    v.minor = code % 10000 / 100;
  } else {  // 2.8.4 was 2804
    v.major = code / 1000;
    v.minor = code % 1000 / 100;
  }
  v.patch = code % 100;
  return v;
}

std::size_t config_size_for(int code) {
  // The header's sizeof(ncclConfig_t) grew at these releases (LP64).
  struct Step {
    int since;
    std::size_t size;
  };
  static constexpr Step kSteps[] = {
      {version_code(2, 30, 0), 96}, {version_code(2, 29, 0), 88}, {version_code(2, 28, 0), 80},
      {version_code(2, 27, 0), 72}, {version_code(2, 18, 0), 48}, {version_code(2, 17, 0), 40},
      {version_code(2, 14, 0), 24},
  };
  for (const auto& s : kSteps) {
    if (code >= s.since) return s.size;
  }
  return 0;
}

Config make_config(int code, bool blocking) {
  Config c;
  c.size = config_size_for(code);
  c.magic = kConfigMagic;
  c.version = static_cast<unsigned int>(code);
  c.blocking = blocking ? 1 : 0;
  c.cgaClusterSize = c.minCTAs = c.maxCTAs = kConfigUndefInt;
  c.netName = nullptr;
  c.splitShare = c.trafficClass = kConfigUndefInt;
  c.commName = nullptr;
  c.collnetEnable = c.CTAPolicy = c.shrinkShare = c.nvlsCTAs = kConfigUndefInt;
  c.nChannelsPerNetPeer = c.nvlinkCentricSched = kConfigUndefInt;
  c.graphUsageMode = c.numRmaCtx = c.maxP2pPeers = c.graphStreamOrdering = kConfigUndefInt;
  return c;
}

}  // namespace cb::nccl
