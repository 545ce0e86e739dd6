// Progress of a long sequence (a sweep's cases, a grid's jobs) on stderr: a bar redrawn in place
// on a terminal, or plain `commbench: progress:` lines at a low rate elsewhere, with the units
// done of the total, the unit that runs now, the elapsed time and an estimate of the time left.
// Every launch path draws through this one piece; docs/run.md "Progress" defines the figures.
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace cb {

// What a display shows at one moment.
struct ProgressState {
  std::size_t done = 0;  // units finished
  std::size_t total = 0;
  std::string current;  // the unit that runs now; empty when none does
  double elapsed_s = 0;
  std::optional<double> left_s;  // estimated time left; none when nothing can be said yet
  std::string unit = "cases";
};

// "0s", "42s", "3m07s", "2h05m".
std::string format_duration(double seconds);

// "[=========>          ]  23/48 cases  0m42s elapsed  ETA 1m10s  gloo allreduce 64 MiB float
// sum", cut to `columns` - 1 characters so that the terminal never wraps it.
std::string progress_bar_line(const ProgressState& s, std::size_t columns);
// "commbench: progress: 23/48 cases done, 42s elapsed, ETA 1m10s; now gloo allreduce ...",
// and at the end "commbench: progress: 48/48 cases done, 1m02s elapsed".
std::string progress_plain_line(const ProgressState& s, bool final_line);

// The time left: every unit has a planned duration (its budget, in seconds or only as a weight).
// The plan's budgets after the running unit are scaled by the pace seen so far (`elapsed_timed`
// spent on units worth `planned_timed`, starting from pace 1 with the weight of `prior` planned
// seconds), and the running unit counts with its scaled budget less the time it has already run.
// None when the plan is empty, or when no pace is known yet and there is no prior.
std::optional<double> estimate_left(double planned_total, double planned_done,
                                    double planned_current, double planned_timed,
                                    double elapsed_timed, double current_running, double prior);
// The prior for budgets in seconds: a tenth of the plan, at most one second.
double budget_prior(double planned_total);

// Follows a sequence through its start events and gives the state to show at any moment.
class ProgressTracker {
 public:
  using Clock = std::chrono::steady_clock;
  // budgets_in_seconds: false when the budgets only weigh the units against each other.
  explicit ProgressTracker(std::string unit = "cases", bool budgets_in_seconds = true,
                           Clock::time_point start = Clock::now());
  // Unit `index` (1-based) of `total` starts; the budgets are in seconds: those of the units
  // before it, its own, and the whole plan's.
  void started(std::size_t index, std::size_t total, std::string label, double planned_done,
               double planned_current, double planned_total, Clock::time_point now);
  void finished(Clock::time_point now);  // every unit is done
  bool active() const { return total_ > 0; }
  bool done() const { return finished_; }
  ProgressState state(Clock::time_point now) const;

 private:
  std::string unit_;
  bool seconds_;
  Clock::time_point start_;
  std::optional<Clock::time_point> first_, current_since_;
  std::size_t index_ = 0, total_ = 0;
  std::string label_;
  double planned_done_ = 0, planned_current_ = 0, planned_total_ = 0;
  double planned_before_first_ = 0;  // units done before this tracker saw one start
  double elapsed_before_current_ = 0;
  bool finished_ = false;
  Clock::time_point finished_at_{};
};

// Draws states on one file descriptor (stderr). Safe to use from several threads.
class ProgressDisplay {
 public:
  enum class Style { Off, Bar, Lines };
  // --progress auto: a bar when `fd` is a terminal, else nothing; always: a bar on a terminal,
  // else plain lines; never: nothing.
  static Style style_for(const std::string& mode, int fd);
  // Plain lines are printed at most once per `line_interval_s` (the first and the final always).
  static constexpr double kLineInterval = 5.0;

  explicit ProgressDisplay(Style style, int fd = 2, double line_interval_s = kLineInterval);
  ~ProgressDisplay();  // erases the bar
  ProgressDisplay(const ProgressDisplay&) = delete;
  ProgressDisplay& operator=(const ProgressDisplay&) = delete;

  Style style() const { return style_; }
  void show(const ProgressState& s);
  // The sequence ended: the bar is erased, plain lines end with a final line.
  void finish(const ProgressState& s);
  void clear();  // erases the bar, so that other output starts on a clean line
  // Other output for the same descriptor (whole lines): the bar is erased first and drawn again
  // below it.
  void print(std::string_view text);
  // Output for another descriptor on the same terminal (stdout), whole lines: the bar is erased
  // first and drawn again below it. Throws a runtime Error when `fd` cannot be written.
  void print_to(int fd, std::string_view text, const std::string& name);

 private:
  void erase_locked();
  void write_locked(std::string_view text);
  std::mutex mu_;
  Style style_;
  int fd_;
  double line_interval_s_;
  bool drawn_ = false;
  std::string last_bar_;
  std::optional<std::chrono::steady_clock::time_point> last_line_;
};

}  // namespace cb
