// One line for a peer that ended, when this process has no commbench parent to name it (env://
// launches): a watcher thread that sees a peer go reports it here, and the main thread, about to
// print a failure of its own (often the consequence: a connection closed by that peer), asks
// here first, so that the line printed names the cause. Exactly one of the two prints.
#pragma once

#include <chrono>
#include <string>

namespace cb {

// Watcher side: `line` names the peer that ended. Unless the main thread is reporting a failure
// (it then prints `line`), prints `commbench: line`, removes this process's temporary files and
// ends it with exit 1. Returns only in the first case.
void report_peer_loss(const std::string& line);

// Watchers exist from now on (set by whatever watches peers): failure_cause() waits for them.
void expect_peer_loss_reports();

// Waits up to `wait` for a watcher to report a peer's end (a watcher that reports then ends the
// process); returns at once when no watcher exists.
void wait_for_peer_loss(std::chrono::milliseconds wait);

// Main thread, before printing a failure: claims the report (a watcher no longer ends the
// process) and returns the line naming a peer that ended, waiting up to `wait` for a watcher
// to see one when watchers exist (a peer's end and the failure it causes arrive together);
// empty when none did. Never returns while a watcher is printing: that watcher ends the process.
std::string failure_cause(std::chrono::milliseconds wait);

}  // namespace cb
