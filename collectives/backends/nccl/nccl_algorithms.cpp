#include "collectives/backends/nccl/nccl_algorithms.hpp"

#include <algorithm>
#include <cctype>

#include "collectives/backends/nccl/nccl_abi.hpp"

namespace cb::nccl {

namespace {

struct Known {
  const char* value;  // as NCCL_ALGO / NCCL_PROTO spell it
  int since;          // first release that accepts it
};

// CollNet was split into CollNetDirect and CollNetChain in 2.14, the oldest release supported.
constexpr Known kAlgos[] = {
    {"Tree", 0},
    {"Ring", 0},
    {"CollNetDirect", version_code(2, 14, 0)},
    {"CollNetChain", version_code(2, 14, 0)},
    {"NVLS", version_code(2, 17, 0)},
    {"NVLSTree", version_code(2, 18, 0)},
    {"PAT", version_code(2, 23, 0)},
};
constexpr Known kProtos[] = {{"LL", 0}, {"LL128", 0}, {"Simple", 0}};

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

}  // namespace

bool has_algorithms(Collective c) {
  switch (c) {
    case Collective::AllReduce:
    case Collective::AllGather:
    case Collective::ReduceScatter:
    case Collective::Broadcast:
    case Collective::Reduce:
      return true;
    default:
      return false;
  }
}

std::vector<std::string> algorithm_names(int version) {
  std::vector<std::string> out;
  for (const auto& a : kAlgos) {
    if (version < a.since) continue;
    for (const auto& p : kProtos) out.push_back(lower(a.value) + "/" + lower(p.value));
  }
  return out;
}

std::optional<ForcedAlgorithm> parse_algorithm(std::string_view name) {
  auto slash = name.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  std::string algo = lower(name.substr(0, slash)), proto = lower(name.substr(slash + 1));
  ForcedAlgorithm f;
  for (const auto& a : kAlgos) {
    if (lower(a.value) == algo) f.algo = a.value;
  }
  for (const auto& p : kProtos) {
    if (lower(p.value) == proto) f.proto = p.value;
  }
  if (f.algo.empty() || f.proto.empty()) return std::nullopt;
  return f;
}

}  // namespace cb::nccl
