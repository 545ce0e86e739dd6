// Axis ranges and tick marks for charts: log2 message sizes, linear bandwidth, log10 time.
#pragma once

#include <string>
#include <vector>

namespace cb {

struct Tick {
  double value;  // in data units
  std::string label;
};

struct Axis {
  double lo = 0, hi = 1;  // data range shown (positive for log axes)
  bool log = false;       // positions are proportional to log(value)
  std::vector<Tick> ticks;
  // Position of `v` along the axis as a fraction in [0, 1].
  double fraction(double v) const;
};

// Sizes in bytes on a log2 axis: ticks at powers of two labelled 8 B, 1 KiB, 1 MiB..., thinned to
// at most `max_ticks`, every step a whole number of octaves.
Axis size_axis(double min_bytes, double max_bytes, int max_ticks = 8);
// 0 to a round number above `max`, ticks at 1, 2 or 5 times a power of ten.
Axis linear_axis(double max, int max_ticks = 6);
// Times in microseconds on a log10 axis from a decade below `min` to a decade above `max`, labelled
// 1 us, 10 us, 1 ms...; with a narrow range 2x and 5x ticks are added.
Axis time_axis(double min_us, double max_us);

}  // namespace cb
