// How a step program (collectives/patterns/step_program.hpp) is carried out once, timed: compute
// for the given time, collectives issued without waiting, waits where the program waits, and the
// step's end once every collective has completed. What engine and backends share for replay:
// the host's driver is the engine's (engine/step_driver.hpp), a backend may have its own
// (Backend::make_step_driver).
#pragma once

#include <vector>

namespace cb {

// Declared only: backend.hpp includes this header, and its users need none of these.
class Communicator;
struct StepProgram;
struct StepTimeline;

class StepDriver {
 public:
  virtual ~StepDriver() = default;
  // Runs `program` once: `channels[c]` issues the ops of channel c, `buffers[b]` is buffer b.
  virtual StepTimeline run(const StepProgram& program, const std::vector<Communicator*>& channels,
                           const std::vector<void*>& buffers) = 0;
};

}  // namespace cb
