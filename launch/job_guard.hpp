// The first process of a fresh job: it leads the job's process group, starts the launcher (or
// the wrapper script around one) in that group and stays as its guard. When the commbench that
// started the job dies, SIGKILL included, the kernel tells the guard (PR_SET_PDEATHSIG) and it
// stops the whole group, so a launcher that a wrapper started, or one that does not notice its
// ranks ending, does not run on. When the launcher ends, the guard stays until the rest of its
// group has ended too (SIGTERM, then SIGKILL 5 s after the stop). Its own end mirrors the
// launcher's (exit code or signal).
#pragma once

#include <sys/types.h>

#include <functional>

namespace cb {

// In the forked child: `start` runs in a fresh child of the guard and must not return (it
// execs). Never returns.
[[noreturn]] void guard_job(pid_t parent, const std::function<void()>& start);

}  // namespace cb
