// Captures NCCL's TUNING debug lines into a private file. NCCL reads NCCL_DEBUG,
// NCCL_DEBUG_SUBSYS and NCCL_DEBUG_FILE once per process, unless ncclResetDebugInit makes it read
// them again. So:
//   per call   (2.27 and later): logging is switched on around one untimed call and back to the
//              user's settings afterwards; timed iterations log nothing. Before 2.27 the reset
//              closes the log file outside NCCL's log lock, racing NCCL's threads, so it is not
//              used there. The variables get their environment entries when the capture is made
//              (before any NCCL thread exists) and change by pointer stores (env_slot.hpp).
//   whole run  (2.20 to 2.26, only with COMMBENCH_NCCL_WHOLE_RUN_LOG=1): the variables are set
//              before the first NCCL call and every call logs one line on rank 0, timed
//              iterations included (host time in small-message latency, hence opt-in). Every read
//              consumes all lines printed since the last one (discard() too), so lines of one call
//              never linger to be taken for another's.
//   off        when not wanted, before 2.20 (TRACE only), or when the user set NCCL_DEBUG_FILE
//              (their log is left alone; in whole-run mode also when they set NCCL_DEBUG).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "collectives/backends/nccl/env_slot.hpp"
#include "collectives/backends/nccl/nccl_library.hpp"

namespace cb::nccl {

class TuningCapture {
 public:
  enum class Mode { Off, PerCall, WholeRun };

  TuningCapture(const Library& lib, bool wanted, std::string subsystems = "TUNING");
  ~TuningCapture();
  TuningCapture(const TuningCapture&) = delete;
  TuningCapture& operator=(const TuningCapture&) = delete;

  Mode mode() const { return mode_; }
  // Stops capturing (every rank must agree: a per-call capture runs one more collective).
  void turn_off(std::string why);
  const std::string& why_off() const { return why_off_; }
  const std::string& file() const { return file_; }

  // Per call: runs `call` with logging on and returns the lines it printed. Whole run: returns
  // the lines printed since the last read (`call` is not run). Off: runs nothing, returns none.
  std::vector<std::string> capture(const std::function<void()>& call);
  // Whole run: drops the lines printed since the last read (calls nobody asks about, such as a
  // forced algorithm's). Otherwise nothing.
  void discard();

 private:
  std::vector<std::string> read_new_lines();

  const Library& lib_;
  Mode mode_ = Mode::Off;
  std::string why_off_;
  std::string subsystems_;
  std::string dir_, file_;
  std::vector<std::unique_ptr<EnvSlot>> slots_;  // per call: NCCL_DEBUG, _SUBSYS, _FILE
  long long offset_ = 0;                         // whole run: bytes already read
};

}  // namespace cb::nccl
