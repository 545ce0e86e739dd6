// The first process of a fresh job: it leads the job's process group, starts the launcher (or
// the wrapper script around one) in that group and stays as its guard. When the commbench that
// started the job dies, SIGKILL included, the kernel tells the guard (PR_SET_PDEATHSIG) and it
// stops the whole group, so a launcher that a wrapper started, or one that does not notice its
// ranks ending, does not run on. When the launcher ends, the guard stays until the rest of its
// group has ended too (SIGTERM, then SIGKILL 5 s after the stop), and removes the job's
// temporary directory if commbench could not. Its own end mirrors the launcher's (exit code or
// signal).
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>

namespace cb {

// In the forked child: `start` runs in a fresh child of the guard and must not return (it
// execs). `own_dir` is the private temporary directory commbench made for the job (empty:
// none): when commbench died (SIGKILL included) before removing it, the guard removes it once
// the group has ended. Never returns.
[[noreturn]] void guard_job(pid_t parent, const std::string& own_dir,
                            const std::function<void()>& start);

}  // namespace cb
