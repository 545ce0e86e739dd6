// A run's measuring loop: every backend's planned cases through the runner, one communicator per
// (collective, algorithm), skip notes printed once, the library's own choice reported for
// "default", wrong elements counted, and each record handed to a sink.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collectives/backend.hpp"
#include "collectives/engine/plan.hpp"
#include "collectives/engine/runner.hpp"
#include "common/record.hpp"

namespace cb {

class Watchdog;

// Where the session reports progress (rank 0's progress line), both optional.
struct SessionEvents {
  std::function<void(std::size_t done, std::size_t total, const std::string& label)> case_started;
  std::function<void()> before_note;  // a note is about to be printed on stderr
};

// The order in which `n` cases run: plan order, or shuffled by `seed` (Fisher-Yates on a fixed
// generator, so that every rank draws the same order).
std::vector<std::size_t> case_order(std::size_t n, std::uint64_t seed);

class Session {
 public:
  // `plans[i]` are the cases of `backends[i]`.
  Session(std::vector<std::unique_ptr<Backend>>& backends,
          const std::vector<std::vector<Case>>& plans, Control& control, Watchdog& watchdog,
          RunnerOptions options, std::function<void(const ResultRecord&)> sink);

  // Runs every case; `nnodes` goes into each record. With a case order seed (a repetition of
  // `run --repeat`) each backend's cases run in an order shuffled by it, and their records reach
  // the sink in plan order when the backend is done. The launch's control is measured at the
  // start, middle and end (rank 0 measures; a warning when it moved).
  void run(int nnodes, const SessionEvents& events = {});
  // The launch's control measurement and case order seed (on rank 0; after run()).
  const LaunchControl& launch_control() const { return launch_control_; }
  // Throws a validation Error when any result had wrong elements.
  void check_results() const;
  // After the results are written (so that a failure to write them is the first line): warns
  // on stderr, from rank 0, when the launch's control measurement moved during it.
  void warn_if_control_moved() const;
  // The straggler judgement over the calls of the cases measured with more than one rank (every
  // rank; after run()); empty when there were none.
  std::optional<RankStraggler> straggler() const;
  // After the results are written: warns on stderr, from rank 0, when one rank (or one host's
  // ranks) entered most calls last and cost the others waiting beyond noise
  // (collectives/engine/straggler.hpp).
  void warn_if_straggler() const;

 private:
  void note(const std::string& message, const SessionEvents& events);
  void measure_twin(Runner& runner, Communicator& comm, const Case& c, const Measurement& m,
                    std::uint64_t index, ResultRecord& rec, const SessionEvents& events);

  std::vector<std::unique_ptr<Backend>>& backends_;
  const std::vector<std::vector<Case>>& plans_;
  Control& control_;
  Watchdog& watchdog_;
  RunnerOptions options_;
  std::function<void(const ResultRecord&)> sink_;
  // The communicators of the backend being measured, one per (collective, algorithm). Members, so
  // that they outlive an error's unwinding out of run() until the session ends.
  std::map<std::pair<Collective, std::string>, Opened> comms_;
  std::vector<std::string> noted_;  // skip notes already printed
  std::uint64_t wrong_total_ = 0;
  std::uint64_t wrong_cases_ = 0;
  std::string first_wrong_;
  LaunchControl launch_control_;
  std::vector<LatenessCase> case_lateness_;  // each case's lateness, where it was judged
};

}  // namespace cb
