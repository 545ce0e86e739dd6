#include "launch/progress.hpp"

#include <unistd.h>

#include <numeric>

namespace cb {

Progress::Progress(const std::string& mode, bool enabled, std::vector<double> planned,
                   std::string unit)
    : tracker_(std::move(unit), !planned.empty()) {
  if (!planned.empty()) {
    before_.resize(planned.size() + 1, 0.0);
    std::partial_sum(planned.begin(), planned.end(), before_.begin() + 1);
  }
  if (!enabled || mode == "never") return;
  auto sender = std::make_unique<ProgressSender>();
  if (sender->connected()) {
    sender_ = std::move(sender);
    return;
  }
  // A parent that asked but cannot be reached (rank 0 on another host) gets plain lines.
  auto style = sender->asked() ? ProgressDisplay::Style::Lines
                               : ProgressDisplay::style_for(mode, STDERR_FILENO);
  if (style != ProgressDisplay::Style::Off) display_ = std::make_unique<ProgressDisplay>(style);
}

void Progress::update(std::size_t index, std::size_t total, const std::string& what) {
  if (!sender_ && !display_) return;
  total_ = total;
  ProgressEvent e;
  e.index = index;
  e.total = total;
  e.label = what;
  if (before_.size() == total + 1 && index >= 1 && index <= total) {
    e.planned_done = before_[index - 1];
    e.planned_current = before_[index] - before_[index - 1];
    e.planned_total = before_[total];
  } else {
    // Budgets unknown: every unit alike, the pace of the finished ones alone.
    e.planned_done = static_cast<double>(index - 1);
    e.planned_current = 1;
    e.planned_total = static_cast<double>(total);
  }
  if (sender_) return sender_->send(e);
  const auto now = ProgressTracker::Clock::now();
  tracker_.started(index, total, what, e.planned_done, e.planned_current, e.planned_total, now);
  display_->show(tracker_.state(now));
}

void Progress::clear() {
  if (display_) display_->clear();
}

void Progress::finish() {
  if (sender_) {
    ProgressEvent e;
    e.finished = true;
    e.total = total_;
    return sender_->send(e);
  }
  if (!display_ || !tracker_.active()) return;
  const auto now = ProgressTracker::Clock::now();
  tracker_.finished(now);
  display_->finish(tracker_.state(now));
}

}  // namespace cb
