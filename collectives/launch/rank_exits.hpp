// How the local launcher turns its ranks' exit statuses into the run's exit code and message.
#pragma once

#include <string>
#include <vector>

namespace cb {

struct RankExit {
  int rank = 0;
  bool signaled = false;             // killed by a signal rather than exiting
  int code = 0;                      // exit code, or the signal number when signaled
  bool stopped_by_launcher = false;  // the launcher sent that signal while cleaning up
  bool unreported = false;  // ended without a word and without an exit status its parent saw
  std::string host;         // set when the job spans several hosts
  std::string message;      // what the rank said about its failure, when it told
  // Another rank that ended the same way within a millisecond of this one, before any other:
  // which of the two went first cannot be told (-1: none).
  int tied_with = -1;
};

struct RunVerdict {
  int exit_code = 0;
  std::string message;  // empty: nothing to add (the ranks reported it themselves)
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

}  // namespace cb
