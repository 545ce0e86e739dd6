// How ranks started by a commbench parent (the local launcher, or its own mpirun) tell it how
// they ended, so that the parent, which sees every rank, prints the one line that names the
// cause: each rank leaves a small file `<dir>/status-<rank>` with its exit code, when it failed
// and its message, or the signal that ended it. A rank that leaves none was killed outright.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "launch/rank_exits.hpp"

namespace cb {

// Set by the parent in its ranks' environment: the directory for the status files.
inline constexpr const char* kRankStatusEnv = "COMMBENCH_RANK_STATUS";

// --- rank side

// Whether this process is a rank with a commbench parent collecting its status. The first call
// also prepares the file name, so that the signal and watchdog paths need not allocate.
bool rank_status_wanted();
// Records "exited with `code`, saying `message`" (empty: nothing more to say) and the time. Only
// the first record counts: a rank records its failure where it happens, before unwinding closes
// its connections (which its peers then report as their own failures), and later records of
// the same end are ignored.
void record_rank_exit(int code, const std::string& message) noexcept;
// Async-signal-safe: records that the process is ending with signal `sig`.
void record_rank_signal(int sig) noexcept;
// Async-signal-safe: records exit code `code` with no message (the rank printed it already).
void record_rank_code(int code) noexcept;

// Also told, where set, of record_rank_exit's, record_rank_signal's and record_rank_code's ends:
// ranks without a commbench parent (env://) tell their peers instead. Must be
// async-signal-safe.
void set_rank_farewell(void (*farewell)(const char* how, int code)) noexcept;

// SIGINT, SIGTERM and SIGHUP remove this process's temporary files (temp_files.hpp) and record
// the signal, then end the process as the signal would. Signals the caller ignores stay ignored.
void end_rank_cleanly_on_signals();

// --- parent side

// How each of `nranks` ranks ended, from the files in `dir`, in the order they failed. A rank
// without a file is taken as killed by `fallback_signal` when that is non-zero (what the launcher
// saw), else as having exited with `fallback_code`.
// `ended_ns` (rank_watch.hpp) orders the ranks that left no file by when they ended.
std::vector<RankExit> read_rank_status(const std::string& dir, int nranks, int fallback_signal,
                                       int fallback_code,
                                       const std::map<int, std::int64_t>& ended_ns = {});

// How the ranks that connected to a parent's RankWatch (`hosts`: rank -> host) ended, in the
// order they failed: from their status files in `dir`; a connected rank that left none ended
// without a word (unreported) at `ended_ns`. Hosts are named when the ranks span several.
// Ranks that never connected (on a host that cannot see the parent's files) are not listed.
std::vector<RankExit> read_watched_ranks(const std::string& dir,
                                         const std::map<int, std::string>& hosts,
                                         const std::map<int, std::int64_t>& ended_ns);

// Adds to exits the local launcher saw (exact codes and signals, reaped at `reaped_ns`) what
// each rank said, and orders them by when each rank failed (its status time, else when reaped).
void attach_rank_messages(const std::string& dir, std::vector<RankExit>& exits,
                          const std::vector<std::int64_t>& reaped_ns);

// The clock of the status times (CLOCK_REALTIME, ns).
std::int64_t status_clock_ns() noexcept;

// The run's exit code from the ranks' ends; prints the one line naming the first cause (the
// peers' consequential errors are not shown): a rank seen stopped up to its end (`stopped`,
// RankWatch::stopped) rather than the peer that timed out waiting for it (name_stopped_rank).
int report_rank_verdict(const std::vector<RankExit>& exits,
                        const std::map<int, double>& stopped = {});

}  // namespace cb
