#include "common/progress_display.hpp"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>

#include "common/checked_write.hpp"

namespace cb {

namespace {

constexpr std::size_t kBarCells = 20;

std::string left_text(const ProgressState& s) {
  return s.left_s ? format_duration(*s.left_s) : std::string("?");
}

std::size_t terminal_columns(int fd) {
  winsize ws{};
  if (::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20) return ws.ws_col;
  return 80;
}

}  // namespace

std::string format_duration(double seconds) {
  if (!(seconds > 0)) return "0s";
  long s = std::lround(seconds);
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  long m = std::lround(seconds / 60);
  return fmt::format("{}h{:02}m", m / 60, m % 60);
}

std::string progress_bar_line(const ProgressState& s, std::size_t columns) {
  const double frac =
      s.total ? std::clamp(static_cast<double>(s.done) / static_cast<double>(s.total), 0.0, 1.0)
              : 0.0;
  std::size_t full = static_cast<std::size_t>(frac * kBarCells);
  std::string bar(full, '=');
  if (full < kBarCells) bar += '>';
  bar.resize(kBarCells, ' ');
  std::string line = fmt::format("[{}] {}/{} {}  {} elapsed  ETA {}", bar, s.done, s.total, s.unit,
                                 format_duration(s.elapsed_s), left_text(s));
  if (!s.current.empty()) line += "  " + s.current;
  if (columns > 1 && line.size() > columns - 1) line.resize(columns - 1);
  return line;
}

std::string progress_plain_line(const ProgressState& s, bool final_line) {
  std::string line = fmt::format("commbench: progress: {}/{} {} done, {} elapsed", s.done, s.total,
                                 s.unit, format_duration(s.elapsed_s));
  if (final_line) return line;
  line += ", ETA " + left_text(s);
  if (!s.current.empty()) line += "; now " + s.current;
  return line;
}

double budget_prior(double planned_total) {
  return std::clamp(0.1 * planned_total, 0.0, 1.0);
}

std::optional<double> estimate_left(double planned_total, double planned_done,
                                    double planned_current, double planned_timed,
                                    double elapsed_timed, double current_running, double prior) {
  if (!(planned_total > 0) || !(planned_timed + prior > 0)) return std::nullopt;
  const double pace = (std::max(elapsed_timed, 0.0) + prior) / (planned_timed + prior);
  const double after = std::max(planned_total - planned_done - planned_current, 0.0) * pace;
  return after + std::max(planned_current * pace - std::max(current_running, 0.0), 0.0);
}

ProgressTracker::ProgressTracker(std::string unit, bool budgets_in_seconds, Clock::time_point start)
    : unit_(std::move(unit)), seconds_(budgets_in_seconds), start_(start) {}

void ProgressTracker::started(std::size_t index, std::size_t total, std::string label,
                              double planned_done, double planned_current, double planned_total,
                              Clock::time_point now) {
  if (!first_) {
    first_ = now;
    planned_before_first_ = planned_done;
  }
  index_ = index;
  total_ = total;
  label_ = std::move(label);
  planned_done_ = planned_done;
  planned_current_ = planned_current;
  planned_total_ = planned_total;
  elapsed_before_current_ = std::chrono::duration<double>(now - *first_).count();
  current_since_ = now;
}

void ProgressTracker::finished(Clock::time_point now) {
  finished_ = true;
  finished_at_ = now;
  label_.clear();
}

ProgressState ProgressTracker::state(Clock::time_point now) const {
  ProgressState s;
  s.unit = unit_;
  s.total = total_;
  if (finished_) now = finished_at_;
  s.elapsed_s = std::chrono::duration<double>(now - start_).count();
  if (finished_) {
    s.done = total_;
    s.left_s = 0.0;
    return s;
  }
  s.done = index_ > 0 ? index_ - 1 : 0;
  s.current = label_;
  const double running =
      current_since_ ? std::chrono::duration<double>(now - *current_since_).count() : 0.0;
  s.left_s = estimate_left(planned_total_, planned_done_, planned_current_,
                           planned_done_ - planned_before_first_, elapsed_before_current_, running,
                           seconds_ ? budget_prior(planned_total_) : 0.0);
  return s;
}

ProgressDisplay::Style ProgressDisplay::style_for(const std::string& mode, int fd) {
  if (mode == "never") return Style::Off;
  const bool tty = ::isatty(fd) == 1;
  if (tty) return Style::Bar;
  return mode == "always" ? Style::Lines : Style::Off;
}

ProgressDisplay::ProgressDisplay(Style style, int fd, double line_interval_s)
    : style_(style), fd_(fd), line_interval_s_(line_interval_s) {}

ProgressDisplay::~ProgressDisplay() {
  clear();
}

void ProgressDisplay::write_locked(std::string_view text) {
  while (!text.empty()) {
    ssize_t n = ::write(fd_, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // progress is never worth failing a run for
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

void ProgressDisplay::erase_locked() {
  if (!drawn_) return;
  write_locked("\r\x1b[K");
  drawn_ = false;
}

void ProgressDisplay::show(const ProgressState& s) {
  std::lock_guard lock(mu_);
  if (style_ == Style::Bar) {
    last_bar_ = progress_bar_line(s, terminal_columns(fd_));
    write_locked("\r" + last_bar_ + "\x1b[K");
    drawn_ = true;
  } else if (style_ == Style::Lines) {
    const auto now = std::chrono::steady_clock::now();
    if (last_line_ && std::chrono::duration<double>(now - *last_line_).count() < line_interval_s_) {
      return;
    }
    last_line_ = now;
    write_locked(progress_plain_line(s, false) + "\n");
  }
}

void ProgressDisplay::finish(const ProgressState& s) {
  std::lock_guard lock(mu_);
  if (style_ == Style::Bar) {
    erase_locked();
    last_bar_.clear();
  } else if (style_ == Style::Lines) {
    write_locked(progress_plain_line(s, true) + "\n");
  }
}

void ProgressDisplay::clear() {
  std::lock_guard lock(mu_);
  erase_locked();
}

void ProgressDisplay::print(std::string_view text) {
  std::lock_guard lock(mu_);
  const bool redraw = drawn_;
  erase_locked();
  write_locked(text);
  if (!text.empty() && text.back() != '\n') write_locked("\n");
  if (redraw) {
    write_locked("\r" + last_bar_ + "\x1b[K");
    drawn_ = true;
  }
}

void ProgressDisplay::print_to(int fd, std::string_view text, const std::string& name) {
  std::lock_guard lock(mu_);
  const bool redraw = drawn_;
  erase_locked();
  auto draw_again = [&] {
    if (!redraw) return;
    write_locked("\r" + last_bar_ + "\x1b[K");
    drawn_ = true;
  };
  try {
    write_all(fd, text, name);
  } catch (...) {
    draw_again();
    throw;
  }
  draw_again();
}

}  // namespace cb
