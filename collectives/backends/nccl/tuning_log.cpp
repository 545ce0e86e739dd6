#include "collectives/backends/nccl/tuning_log.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <regex>

namespace cb::nccl {

namespace {

// Index order of NCCL_ALGO_* and NCCL_PROTO_* in 2.20-2.23, which printed the numbers.
std::string algorithm_name(const std::string& token) {
  static const char* const kAlgos[] = {
      "TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};
  if (token.empty() || !std::all_of(token.begin(), token.end(), ::isdigit)) return token;
  std::size_t i = std::stoul(token);
  return i < std::size(kAlgos) ? kAlgos[i] : "ALGO" + token;
}

std::string protocol_name(const std::string& token) {
  static const char* const kProtos[] = {"LL", "LL128", "SIMPLE"};
  if (token.empty() || !std::all_of(token.begin(), token.end(), ::isdigit)) return token;
  std::size_t i = std::stoul(token);
  return i < std::size(kProtos) ? kProtos[i] : "PROTO" + token;
}

}  // namespace

std::optional<TuningChoice> parse_tuning_line(std::string_view line) {
  static const std::string kMarker = "NCCL INFO ";
  auto at = line.find(kMarker);
  if (at == std::string_view::npos) return std::nullopt;
  const std::string body(line.substr(at + kMarker.size()));
  // Optional "<Func>: " (2.23+), bytes, then the algorithm and protocol, as names or numbers.
  static const std::regex kCollective(
      R"(^(?:([A-Za-z]+): )?(\d+) Bytes -> Algo (\w+) proto (\w+)(?: channel\{Lo\.\.Hi\}=\{(\d+)\.\.(\d+)\}| time [-+0-9.eE]+)?)");
  static const std::regex kSymmetric(
      R"(^([A-Za-z]+) \[Symmetric\]: (\d+) Bytes -> Kernel (\S+) nchannels (\d+))");
  std::smatch m;
  TuningChoice c;
  if (std::regex_search(body, m, kCollective)) {
    c.function = m[1].str();
    c.bytes = std::stoull(m[2].str());
    c.algorithm = algorithm_name(m[3].str());
    c.protocol = protocol_name(m[4].str());
    if (m[5].matched) c.channels = std::stoi(m[6].str()) - std::stoi(m[5].str()) + 1;
    return c;
  }
  if (std::regex_search(body, m, kSymmetric)) {
    c.function = m[1].str();
    c.bytes = std::stoull(m[2].str());
    c.kernel = m[3].str();
    c.channels = std::stoi(m[4].str());
    return c;
  }
  return std::nullopt;
}

std::string describe(const TuningChoice& c) {
  std::string s = c.kernel.empty() ? fmt::format("{}/{}", c.algorithm, c.protocol)
                                   : fmt::format("symmetric kernel {}", c.kernel);
  if (c.channels > 0) s += fmt::format(", {} ch", c.channels);
  return s;
}

std::string_view tuning_function(Collective c) {
  switch (c) {
    case Collective::AllReduce:
    case Collective::Barrier:
      return "AllReduce";  // a barrier is a one-element allreduce
    case Collective::AllGather:
      return "AllGather";
    case Collective::ReduceScatter:
      return "ReduceScatter";
    case Collective::Broadcast:
      return "Broadcast";
    case Collective::Reduce:
      return "Reduce";
    default:
      return "";
  }
}

std::optional<TuningChoice> find_choice(const std::vector<std::string>& lines,
                                        std::string_view function,
                                        const std::vector<std::uint64_t>& bytes) {
  for (const auto& line : lines) {
    auto c = parse_tuning_line(line);
    if (!c) continue;
    if (!c->function.empty() ? c->function == function
                             : std::find(bytes.begin(), bytes.end(), c->bytes) != bytes.end()) {
      return c;
    }
  }
  return std::nullopt;
}

}  // namespace cb::nccl
