#include "common/units.hpp"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "common/error.hpp"

namespace cb {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::uint64_t parse_size(std::string_view text, std::string_view what) {
  auto bad = [&]() {
    usage_error("invalid {} '{}': expected a byte count such as 8, 64K, 4M, 1G or 512KiB", what,
                text);
  };
  if (text.empty()) bad();
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data()) bad();
  std::string suffix = lower(std::string_view(end, text.data() + text.size() - end));
  int shift = 0;
  if (suffix.empty() || suffix == "b") {
    shift = 0;
  } else if (suffix == "k" || suffix == "kb" || suffix == "kib") {
    shift = 10;
  } else if (suffix == "m" || suffix == "mb" || suffix == "mib") {
    shift = 20;
  } else if (suffix == "g" || suffix == "gb" || suffix == "gib") {
    shift = 30;
  } else if (suffix == "t" || suffix == "tb" || suffix == "tib") {
    shift = 40;
  } else {
    bad();
  }
  if (shift > 0 && value > (std::numeric_limits<std::uint64_t>::max() >> shift)) {
    usage_error("invalid {} '{}': too large", what, text);
  }
  return value << shift;
}

std::string exact_size(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (unit < 4 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return fmt::format("{} {}", bytes, kUnits[unit]);
}

std::string format_size(std::uint64_t bytes) {
  static constexpr std::array<const char*, 5> kUnits = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (v >= 1024.0 && unit + 1 < kUnits.size()) {
    v /= 1024.0;
    ++unit;
  }
  if (unit == 0) return fmt::format("{} B", bytes);
  // Three significant digits, but whole units from 100 on: "1014 KiB", never "1.01e+03 KiB".
  if (v == std::floor(v) || v >= 100) return fmt::format("{:.0f} {}", v, kUnits[unit]);
  return fmt::format("{:.3g} {}", v, kUnits[unit]);
}

std::string format_time_us(double us) {
  if (!std::isfinite(us)) return "-";
  if (us < 1000.0) return fmt::format("{:.3g} us", us);
  if (us < 1e6) return fmt::format("{:.3g} ms", us / 1e3);
  return fmt::format("{:.3g} s", us / 1e6);
}

std::int64_t parse_int(std::string_view text, std::string_view what) {
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    usage_error("invalid {} '{}': expected an integer", what, text);
  }
  return value;
}

double parse_double(std::string_view text, std::string_view what) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value)) {
    usage_error("invalid {} '{}': expected a number", what, text);
  }
  return value;
}

}  // namespace cb
