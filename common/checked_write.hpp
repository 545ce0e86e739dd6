// Writing output where a failure is never silent: every byte handed to write(2) is checked, and
// a failure is a runtime Error naming the file and the OS error.
#pragma once

#include <string>
#include <string_view>

namespace cb {

// Writes all of `text` to `fd`; throws a runtime Error "cannot write NAME: OS error" on failure.
// `name` is how the user knows the file ('out.csv' quoted, or "standard output").
void write_all(int fd, std::string_view text, const std::string& name);

// How an output path is named in messages: quoted.
std::string quoted_name(const std::string& path);

// Flushes std::cout and stdout; throws like write_all when anything written there was lost.
void flush_stdout();

}  // namespace cb
