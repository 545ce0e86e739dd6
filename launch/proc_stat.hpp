// A process's run state and its process group, from /proc/PID/stat.
#pragma once

#include <sys/types.h>

#include <optional>

namespace cb {

struct ProcStat {
  char state = 0;  // R, S, D, T (stopped), t (traced), Z (zombie), X (dead), ...
  pid_t pgrp = 0;
};

// The fields after the command name (which may hold ')' or spaces); none when the process is gone.
std::optional<ProcStat> read_proc_stat(pid_t pid);

}  // namespace cb
