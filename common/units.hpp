// Sizes and human-readable units shared by every subcommand.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cb {

// "8", "64K", "4M", "1G", "512KiB", "2MB" (binary: 1K = 1024). Throws a usage Error naming `what`.
std::uint64_t parse_size(std::string_view text, std::string_view what = "size");

// 8 -> "8 B", 4096 -> "4 KiB", 3*1048576 -> "3 MiB", 1536 -> "1.5 KiB".
std::string format_size(std::uint64_t bytes);

// Exactly, in the largest unit that divides it: "1 MiB", "1025 KiB", "1000 B", "1536 B".
std::string exact_size(std::uint64_t bytes);

// Microseconds with a scaled unit: "0.42 us", "12.3 ms", "1.25 s".
std::string format_time_us(double us);

// Strict non-negative integer / finite double parsing for option values.
std::int64_t parse_int(std::string_view text, std::string_view what);
double parse_double(std::string_view text, std::string_view what);

}  // namespace cb
