// Temporary files of this process that must not outlive it: removed when a run fails, times out
// or is interrupted. The list is kept in fixed storage so that a signal handler or the watchdog
// can remove them without allocating.
#pragma once

#include <string>

namespace cb {

// The suffix of this run's temporary files, `.tmp.<tag>`: the tag is COMMBENCH_TMP_TAG when a
// parent commbench set it (so it can clean up after a rank that was killed), else this pid.
std::string temp_suffix();

// Remembers `path` (at most 64 at a time; more are simply not tracked) until forgotten.
void track_temp_file(const std::string& path);
void forget_temp_file(const std::string& path);

// Unlinks every tracked file. Async-signal-safe.
void remove_temp_files() noexcept;

// Set by a parent commbench in its children's environment (see temp_suffix).
inline constexpr const char* kTempTagEnv = "COMMBENCH_TMP_TAG";

}  // namespace cb
