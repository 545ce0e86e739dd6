// Carrying out a step program (collectives/patterns/step_program.hpp) once, timed: compute for
// the given time, collectives issued without waiting, waits where the program waits, and the
// step's end once every collective has completed.
#pragma once

#include <memory>
#include <vector>

namespace cb {

// Declared only: backend.hpp includes this header, and its users need none of these.
class Communicator;
struct CollectiveCall;
class Watchdog;
struct StepOp;
struct StepProgram;
struct StepTimeline;

class StepDriver {
 public:
  virtual ~StepDriver() = default;
  // Runs `program` once: `channels[c]` issues the ops of channel c, `buffers[b]` is buffer b.
  virtual StepTimeline run(const StepProgram& program, const std::vector<Communicator*>& channels,
                           const std::vector<void*>& buffers) = 0;
};

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

// The call an op makes with the program's buffers.
CollectiveCall step_call(const StepOp& op, const std::vector<void*>& buffers);

}  // namespace cb
