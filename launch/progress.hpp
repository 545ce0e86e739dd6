// A sequence's progress as this process shows it: rank 0 of a run whose parent is commbench
// reports each case to the parent, which draws the display (launch/progress_relay);
// otherwise (under a user's mpirun or srun, or a sweep of jobs) it draws its own on stderr, a bar
// on a terminal or plain lines at a low rate (common/progress_display).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "common/progress_display.hpp"
#include "launch/progress_relay.hpp"

namespace cb {

class Progress {
 public:
  // mode: --progress (auto, always, never); enabled: whether this process shows progress (rank
  // 0); planned: each unit's planned seconds in order (empty: not known, the time left is then
  // estimated from the pace alone); unit: what the units are called.
  Progress(const std::string& mode, bool enabled, std::vector<double> planned = {},
           std::string unit = "cases");
  // Unit `index` (1-based) of `total` starts; `what` names it.
  void update(std::size_t index, std::size_t total, const std::string& what);
  void clear();   // erases the bar before other output
  void finish();  // every unit is done

 private:
  std::vector<double> before_;  // planned seconds before each unit, and in all (last)
  std::unique_ptr<ProgressSender> sender_;
  std::unique_ptr<ProgressDisplay> display_;
  ProgressTracker tracker_;
  std::size_t total_ = 0;
};

}  // namespace cb
