#include "common/stop_line.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "common/error.hpp"
#include "common/temp_files.hpp"

namespace cb {

namespace {

struct StopLine {
  int sig;
  const char* name;
  char text[160];
  std::size_t size;
};

// Written before any handler is installed: the handler only writes, unlinks and exits.
StopLine g_lines[] = {
    {SIGINT, "Interrupt", {}, 0}, {SIGTERM, "Terminated", {}, 0}, {SIGHUP, "Hangup", {}, 0}};

extern "C" void end_on_stop(int sig) {
  remove_temp_files();
  for (const auto& l : g_lines) {
    if (l.sig == sig) (void)!::write(STDERR_FILENO, l.text, l.size);
  }
  ::_exit(kExitRuntime);
}

}  // namespace

void end_with_one_line_on_stop(const char* command) {
  for (auto& l : g_lines) {
    const int n =
        std::snprintf(l.text, sizeof l.text, "commbench: %s interrupted by signal %d (%s)\n",
                      command, l.sig, l.name);
    l.size = n < 0 ? 0 : std::min(static_cast<std::size_t>(n), sizeof l.text - 1);
  }
  struct sigaction sa {};
  sa.sa_handler = end_on_stop;
  sigemptyset(&sa.sa_mask);
  for (const auto& l : g_lines) ::sigaction(l.sig, &sa, nullptr);
}

}  // namespace cb
