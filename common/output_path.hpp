// What an output path may be, decided before any work starts, and where it is really written.
#pragma once

#include <string>

namespace cb {

// The file that writing `path` replaces: `path` itself, or what a symbolic link points to
// (outputs are written through links, never replace them).
std::string output_target(const std::string& path);

// Usage errors for an output that cannot be written: a directory, an existing file without
// write permission, a directory where its file (or the temporary file it is replaced through)
// cannot be created, a non-regular file where the output is replaced atomically (`streamed`
// outputs such as JSONL are written in place, so a device or pipe is fine there).
void check_output_file(const std::string& path, bool streamed);

}  // namespace cb
