// The host's step driver: a step program carried out by the host thread, collectives through the
// communicators' non-blocking entry points (start/test/wait).
#pragma once

#include <memory>

#include "collectives/step_driver.hpp"

namespace cb {

class Watchdog;

// The host's driver. The compute runs on a clock of its own, as a device's would: each compute
// action moves it on by its time, a wait moves it to the collective's completion, and the host
// thread busy-waits until the clock is reached, polling the outstanding collectives (test(), so
// that a library that progresses only when called does, and each completion is stamped when it
// is seen) and yielding its core between polls, so that compute does not take the host's cores
// from communication threads (compute contends with communication only where the device runs
// it). A poll that returns late does not stretch the compute. At a wait, and at the end, the
// outstanding collectives are polled and, when none has completed, the oldest waited for; the
// step ends when the last collective and the compute have. The watchdog is told of progress
// after each action.
std::unique_ptr<StepDriver> make_host_step_driver(Watchdog& watchdog);

}  // namespace cb
