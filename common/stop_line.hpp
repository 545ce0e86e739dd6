// For commands that start no process and write their files at the end (check, compare, plot):
// SIGINT, SIGTERM or SIGHUP end them at once with one line, not by the signal's silent default.
#pragma once

namespace cb {

// From now on, each of those signals removes this process's temporary files, prints
// "commbench: COMMAND interrupted by signal N (NAME)" and exits 1 (a runtime failure).
void end_with_one_line_on_stop(const char* command);

}  // namespace cb
