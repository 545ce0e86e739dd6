// The kernel's CPU list format ("0-47,96-143"), used by sysfs cpulist files and NVML masks.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cb {

// "0-3,8,10-11" -> {0,1,2,3,8,10,11}; an empty string is an empty list; nullopt when malformed.
std::optional<std::vector<int>> parse_cpulist(std::string_view text);
// The inverse, with ranges collapsed.
std::string format_cpulist(const std::vector<int>& cpus);
// A CPU bit mask of 64-bit words (NVML's unsigned long arrays), word 0 holding CPUs 0-63.
std::vector<int> cpus_from_mask(const std::vector<unsigned long>& words);

}  // namespace cb
