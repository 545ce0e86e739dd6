// The schema name of every document commbench writes or reads ("schema" key, docs/output.md "Schemas").
#pragma once

#include <string_view>

namespace cb {

inline constexpr std::string_view kResultSchema = "commbench/result/v1";
inline constexpr std::string_view kCompareSchema = "commbench/compare/v1";
inline constexpr std::string_view kCheckSchema = "commbench/check/v1";
inline constexpr std::string_view kTopologySchema = "commbench/topology/v1";
inline constexpr std::string_view kSnapshotSchema = "commbench/snapshot/v1";
inline constexpr std::string_view kMembwSchema = "commbench/membw/v1";
inline constexpr std::string_view kLinksSchema = "commbench/links/v2";
inline constexpr std::string_view kClusterTopologySchema = "commbench/cluster-topology/v1";
inline constexpr std::string_view kGpuCopySchema = "commbench/gpucopy/v1";
inline constexpr std::string_view kReplaySchema = "commbench/replay/v1";
inline constexpr std::string_view kReplayPlanSchema = "commbench/replay-plan/v1";

}  // namespace cb
