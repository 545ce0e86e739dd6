// A launch's control measurement: figures no measured backend touches and no change to commbench
// can move (two pinned threads bouncing a cache line, a fixed compute loop), taken at the start,
// middle and end of the launch, with the host's steal time and load average. They say whether the
// machine itself changed between launches, so compare can tell a slower machine from a slower
// build.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cb {

// How far the control may move within a launch, or differ between launches, and still count as
// the same machine: round trip within 1.5x, compute within 1.25x.
inline constexpr double kPingpongTolerance = 1.5;
inline constexpr double kComputeTolerance = 1.25;

struct ControlSample {
  std::string at;           // "start", "middle" or "end"
  double pingpong_ns = 0;   // median round trip of one cache line between two pinned threads
  double compute_us = 0;    // median time of a fixed dependent arithmetic loop
};

struct LaunchControl {
  std::optional<int> repeat;         // the repetition of a `run --repeat` (0-based)
  std::uint64_t case_order_seed = 0;  // 0: cases in plan order; else the shuffle's seed
  std::vector<ControlSample> samples;
  double steal_fraction = 0;  // CPU time the hypervisor took during the launch, of all CPU time
  double load_average = 0;    // 1-minute load average at the start
  // The launch's figures: the median over its samples (0 when there are none).
  double pingpong_ns() const;
  double compute_us() const;
  // How far the samples moved during the launch: max / min of each figure (1 when steady).
  double pingpong_moved() const;
  double compute_moved() const;
};

void to_json(nlohmann::json& j, const LaunchControl& c);
void from_json(const nlohmann::json& j, LaunchControl& c);  // lenient: missing figures stay 0

}  // namespace cb
