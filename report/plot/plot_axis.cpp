#include "report/plot/plot_axis.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/units.hpp"

namespace cb {

double Axis::fraction(double v) const {
  if (log) {
    if (v <= 0 || lo <= 0 || hi <= lo) return 0;
    return (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo));
  }
  return hi > lo ? (v - lo) / (hi - lo) : 0;
}

Axis size_axis(double min_bytes, double max_bytes, int max_ticks) {
  Axis a;
  a.log = true;
  min_bytes = std::max(min_bytes, 1.0);
  max_bytes = std::max(max_bytes, min_bytes);
  // Half an octave of margin so end points are not on the frame; a single size gets an octave
  // and a half either side for context.
  double margin = min_bytes == max_bytes ? 1.5 : 0.5;
  a.lo = std::exp2(std::log2(min_bytes) - margin);
  a.hi = std::exp2(std::log2(max_bytes) + margin);
  int first = static_cast<int>(std::floor(std::log2(a.lo)));
  int last = static_cast<int>(std::ceil(std::log2(a.hi)));
  int span = last - first;
  int step = std::max(1, (span + max_ticks - 1) / std::max(1, max_ticks - 1));
  // Prefer steps that keep unit boundaries (1 KiB, 1 MiB) on ticks when the range is wide.
  for (int nice : {1, 2, 5, 10, 20}) {
    if (nice >= step) {
      step = nice;
      break;
    }
  }
  int start = static_cast<int>(std::ceil(std::log2(a.lo)));
  if (step > 1) start = ((start + step - 1) / step) * step;
  for (int e = start; std::exp2(e) <= a.hi; e += step) {
    a.ticks.push_back({std::exp2(e), format_size(static_cast<std::uint64_t>(std::exp2(e)))});
  }
  return a;
}

Axis linear_axis(double max, int max_ticks) {
  Axis a;
  if (!(max > 0)) max = 1;
  double raw = max / std::max(1, max_ticks - 1);
  double power = std::pow(10, std::floor(std::log10(raw)));
  double step = power;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (m * power >= raw) {
      step = m * power;
      break;
    }
  }
  a.lo = 0;
  a.hi = std::ceil(max * 1.05 / step) * step;
  for (double v = 0; v <= a.hi + step * 1e-9; v += step) {
    a.ticks.push_back({v, fmt::format("{:g}", std::round(v / step) * step)});
  }
  return a;
}

Axis time_axis(double min_us, double max_us) {
  Axis a;
  a.log = true;
  min_us = std::max(min_us, 1e-3);
  max_us = std::max(max_us, min_us);
  int first = static_cast<int>(std::floor(std::log10(min_us)));
  int last = static_cast<int>(std::ceil(std::log10(max_us)));
  if (last == first) ++last;
  a.lo = std::pow(10, first);
  a.hi = std::pow(10, last);
  bool narrow = last - first <= 2;
  for (int e = first; e <= last; ++e) {
    double decade = std::pow(10, e);
    a.ticks.push_back({decade, format_time_us(decade)});
    if (narrow && e < last) {
      a.ticks.push_back({2 * decade, format_time_us(2 * decade)});
      a.ticks.push_back({5 * decade, format_time_us(5 * decade)});
    }
  }
  return a;
}

}  // namespace cb
