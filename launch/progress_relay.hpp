// Progress where commbench is the ranks' parent (its local launcher, its own mpirun): rank 0
// sends an event at the start of every case and at the end to a Unix datagram socket of the
// parent, named in the ranks' environment, and the parent draws the one progress display on its
// stderr. Rank 0 sends between cases only, never inside a timed batch, and never waits for the
// parent (a full socket drops the event). The parent's thread sleeps in poll() until an event
// comes, or a second passes with a bar on a terminal (elapsed time and ETA tick), or the
// plain-line interval passes.
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "common/progress_display.hpp"

namespace cb {

// Set in the ranks' environment: the parent's socket.
inline constexpr const char* kProgressEnv = "COMMBENCH_PROGRESS";

struct ProgressEvent {
  bool finished = false;  // every case is done
  std::size_t index = 0;  // the case that starts (1-based)
  std::size_t total = 0;
  double planned_done = 0, planned_current = 0, planned_total = 0;  // budgets, seconds
  std::string label;
};

std::string encode_progress_event(const ProgressEvent& e);
std::optional<ProgressEvent> decode_progress_event(std::string_view text);

// The parent's side.
class ProgressRelay {
 public:
  // Listens at `dir`/progress.sock; path() is empty when it cannot (the ranks then draw their
  // own progress). With a bar, ranks' stderr should go through rank_stderr().
  ProgressRelay(ProgressDisplay::Style style, const std::string& dir);
  ~ProgressRelay();  // shows what is left of the ranks' output, erases the bar
  ProgressRelay(const ProgressRelay&) = delete;
  ProgressRelay& operator=(const ProgressRelay&) = delete;

  const std::string& path() const { return path_; }
  // With a bar: the write end of a pipe to give the ranks as stderr, whose lines are shown above
  // the bar; -1 otherwise. close_rank_stderr() closes this process's copy once they started.
  int rank_stderr() const { return err_pipe_[1]; }
  void close_rank_stderr();
  // A line of other output on stderr, shown above the bar.
  void print(std::string_view line);
  // With a bar and stdout on a terminal: the write end of a pipe to give the ranks as stdout, its
  // lines shown above the bar; -1 otherwise.
  int rank_stdout() const { return out_pipe_[1]; }
  // Results for stdout, shown above the bar when stdout is a terminal (whole lines; the rest is
  // kept until more comes or the end). Throws a runtime Error when stdout cannot be written.
  void pass_stdout(std::string_view data);
  // Ends the relay: what the ranks still wrote or sent is shown, the bar erased. Returns the
  // error that writing stdout met, if any ("" when none).
  std::string finish();

 private:
  void loop();
  void receive(ProgressTracker& tracker);
  void on_stderr(std::string_view data, std::string& partial);
  void on_stdout(std::string_view data);
  ProgressDisplay display_;
  std::string path_;
  int sock_ = -1;
  int stop_pipe_[2] = {-1, -1};
  int err_pipe_[2] = {-1, -1};
  int out_pipe_[2] = {-1, -1};
  std::mutex out_mu_;
  std::string out_partial_;
  std::string out_error_;
  bool stdout_tty_ = false;
  std::thread thread_;
};

// Rank 0's side: the parent's socket from the environment.
class ProgressSender {
 public:
  ProgressSender();
  ~ProgressSender();
  ProgressSender(const ProgressSender&) = delete;
  ProgressSender& operator=(const ProgressSender&) = delete;
  bool asked() const { return asked_; }        // the parent named a socket
  bool connected() const { return fd_ >= 0; }  // and it could be reached (same host)
  void send(const ProgressEvent& e) noexcept;

 private:
  bool asked_ = false;
  int fd_ = -1;
};

}  // namespace cb
