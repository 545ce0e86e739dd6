// A step's figures from its timeline (docs/replay.md defines each): the time at least one
// collective was in flight, the exposed communication (step - compute) and the overlap
// efficiency (1 - exposed / communication), and their medians over the timed steps.
#pragma once

#include <optional>
#include <vector>

#include "collectives/patterns/step_program.hpp"
#include "common/replay_record.hpp"

namespace cb {

// One step as a rank saw it, in microseconds from the step's start.
struct StepTimeline {
  double step_us = 0;                    // until its last collective completed
  double compute_us = 0;                 // its compute actions' own time
  std::vector<double> start_us, end_us;  // per op, in issue order
};

// The union of the ops' [start, end] intervals: time with at least one collective in flight.
double communication_us(const StepTimeline& t);

// The communication that did not hide behind compute: step - compute.
double exposed_us(double step_us, double compute_us);
// 1 - exposed / communication; empty without communication (summarize_steps: or compute).
std::optional<double> overlap_efficiency(double exposed_us, double comm_us);

// The record's figures and ops from the timed steps (each already its slowest rank's): every
// figure the median over steps (step also its min and max); exposed communication and overlap
// from the steps' medians.
void summarize_steps(const StepProgram& program, const std::vector<StepTimeline>& steps,
                     ReplayRecord& out);

}  // namespace cb
