// Text written for a shell to source (tune --emit-env): comments that stay comments whatever
// they quote, and the test for values no such file should carry.
#pragma once

#include <string>
#include <string_view>

namespace cb {

// Whether `text` holds a control character (a newline, carriage return, tab, escape, DEL, ...):
// such a value would end a comment line or a NCCL_CONF_FILE line early.
bool has_control_character(std::string_view text);

// `text` as one comment line, "# " + text + "\n", each control character written as its escape
// (\n, \r, \t, \xNN), so no part of `text` can become a command when the file is sourced.
std::string shell_comment(std::string_view text);

}  // namespace cb
