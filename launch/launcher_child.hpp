// Running an MPI launcher (mpirun, mpiexec) as a child of commbench, so that commbench stays
// the process the user and the shell see: its stdout is passed on with every write checked,
// the ranks' own `commbench:` lines on its stderr are passed on as they come, anything else it
// prints (banners, help messages) is kept back for the caller, and SIGINT, SIGTERM and SIGHUP
// sent to commbench are passed to the launcher.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cb {

struct LauncherCommand {
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> env_defaults;  // set unless already set
  std::vector<std::pair<std::string, std::string>> env;           // always set
  // Where the ranks' own `commbench:` lines go (whole lines); empty: straight to stderr.
  std::function<void(std::string_view)> pass_stderr;
  // Where the launcher's stdout goes (it throws a runtime Error when it cannot be written);
  // empty: straight to stdout.
  std::function<void(std::string_view)> pass_stdout;
  // The private temporary directory made for the ranks, removed by the launcher's guard when
  // commbench dies before removing it (job_guard.hpp); empty: none.
  std::string own_dir;
};

struct LauncherOutcome {
  int wait_status = 0;               // as from waitpid
  int stop_signal = 0;               // the signal commbench received and passed on, if any
  std::vector<std::string> chatter;  // the launcher's own stderr lines (blank ones too), kept back
  std::string stdout_error;          // set when stdout could not be written
};

// Runs the command to its end. Throws a runtime Error when it cannot be started.
LauncherOutcome run_launcher_child(const LauncherCommand& command);

}  // namespace cb
