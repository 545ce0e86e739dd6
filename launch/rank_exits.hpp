// How the local launcher turns its ranks' exit statuses into the run's exit code and message.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace cb {

struct RankExit {
  int rank = 0;
  bool signaled = false;             // killed by a signal rather than exiting
  int code = 0;                      // exit code, or the signal number when signaled
  bool stopped_by_launcher = false;  // the launcher sent that signal while cleaning up
  bool unreported = false;  // ended without a word and without an exit status its parent saw
  bool guessed = false;     // left no status: how it ended is what its launcher's exit status says
  std::string host;         // set when the job spans several hosts
  std::string message;      // what the rank said about its failure, when it told
  // Another rank that ended the same way within a millisecond of this one, before any other:
  // which of the two went first cannot be told (-1: none).
  int tied_with = -1;
};

struct RunVerdict {
  int exit_code = 0;
  std::string message;     // empty: nothing to add (the ranks reported it themselves)
  bool rank_said = false;  // the message (or the code 2-5) is a rank's own, not one naming it
  bool killed = false;     // the chosen rank was killed outright (not by its launcher): the cause
};

// "rank 2 was killed by signal 9 (Killed)", "rank 1 exited with code 1", "rank 1 on host h2 ...".
std::string describe(const RankExit& e);

// The most telling failure wins: a rank killed by a signal (not by the launcher) or that ended
// without a word, then an exit
// code outside commbench's own (0-5), then 4 (timeout), 3 (validation), 2 (usage),
// 5 (regression), then 1 (runtime error, often a peer's reaction to the real failure). Exit
// codes 2-5 are passed through as they are; anything else ends the run with exit 1. The message
// is the chosen rank's own when it left one, else one naming the rank (codes 2-5: none, the rank
// printed it).
RunVerdict judge(const std::vector<RankExit>& exits);

// A failed verdict that no rank explained ("rank 1 exited with code 1") gets what the launcher or
// the MPI library said (first_meaningful_message) in front: "mpiexec.mpich reported: Fatal error
// in internal_Init_thread: ... value (bogus); rank 1 was killed by signal 15 (Terminated)".
RunVerdict with_launcher_words(RunVerdict v, const std::string& launcher, const std::string& said);

// A failed verdict when a rank's process was stopped (SIGSTOP, a debugger) up to its end
// (`stopped`: rank -> seconds, RankWatch::stopped): that rank made no progress, and the timeout
// its peers hit names it: "timeout: allreduce 64 B float sum made no progress for 5 s
// (--timeout): rank 0 was stopped (SIGSTOP or a debugger) for 6.1 s and made no progress", exit 4
// when any rank timed out. `hosts` (rank -> host) names the host when the ranks span several.
RunVerdict name_stopped_rank(RunVerdict v, const std::vector<RankExit>& exits,
                             const std::map<int, double>& stopped,
                             const std::map<int, std::string>& hosts);

// The exit code of a job run under a launcher that exited with `launcher_code`: commbench's own
// verdicts 2-5 pass only when a rank reported them through commbench's channel (its status file
// or its `commbench:` line); a launcher's own 2-5 is a launcher failure, 1; above 5: 1.
int launcher_job_exit_code(int launcher_code, bool rank_reported);

}  // namespace cb
