#include "collectives/backends/nccl/tuning_capture.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>

namespace cb::nccl {

namespace {

constexpr const char* kDebugVars[] = {"NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE"};

std::optional<std::string> get(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::optional<std::string>(v) : std::nullopt;
}

// NCCL_DEBUG_FILE expands %h and %p; a literal % is written %%.
std::string escape_percent(const std::string& path) {
  std::string out;
  for (char c : path) out += c == '%' ? std::string("%%") : std::string(1, c);
  return out;
}

}  // namespace

TuningCapture::TuningCapture(const Library& lib, bool wanted, std::string subsystems)
    : lib_(lib), subsystems_(std::move(subsystems)) {
  if (!wanted) {
    why_off_ = "not requested";
    return;
  }
  if (!lib.at_least(2, 20)) {
    why_off_ = "NCCL before 2.20 prints its choice only at TRACE level";
    return;
  }
  if (get("NCCL_DEBUG_FILE")) {
    why_off_ = "NCCL_DEBUG_FILE is set, so NCCL's log is left where it goes";
    return;
  }
  const bool per_call = lib.fn.ResetDebugInit && lib.at_least(2, 27);
  if (!per_call && get("COMMBENCH_NCCL_WHOLE_RUN_LOG").value_or("") != "1") {
    why_off_ =
        "this NCCL (before 2.27) would log every timed call on rank 0, adding host time to "
        "small-message latency; COMMBENCH_NCCL_WHOLE_RUN_LOG=1 captures it anyway";
    return;
  }
  if (!per_call && get("NCCL_DEBUG")) {
    why_off_ = "NCCL_DEBUG is set and this NCCL reads it only once";
    return;
  }
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/commbench-nccl-XXXXXX";
  if (!::mkdtemp(pattern.data())) {
    why_off_ = "cannot create a private directory for NCCL's log";
    return;
  }
  dir_ = pattern;
  file_ = dir_ + "/debug.log";
  if (per_call) {
    mode_ = Mode::PerCall;
    for (const char* name : kDebugVars) slots_.push_back(std::make_unique<EnvSlot>(name));
  } else {
    mode_ = Mode::WholeRun;
    ::setenv("NCCL_DEBUG", "INFO", 1);
    ::setenv("NCCL_DEBUG_SUBSYS", subsystems_.c_str(), 1);
    ::setenv("NCCL_DEBUG_FILE", escape_percent(file_).c_str(), 1);
  }
}

void TuningCapture::turn_off(std::string why) {
  if (mode_ == Mode::WholeRun) return;  // the variables are read already; reading is harmless
  mode_ = Mode::Off;
  why_off_ = std::move(why);
}

TuningCapture::~TuningCapture() {
  if (!file_.empty()) ::unlink(file_.c_str());
  if (!dir_.empty()) ::rmdir(dir_.c_str());
}

std::vector<std::string> TuningCapture::capture(const std::function<void()>& call) {
  if (mode_ == Mode::Off) return {};
  if (mode_ == Mode::WholeRun) return read_new_lines();
  // NCCL reopens its file with "w" at the first log line after a reset; removing it first means
  // a call that logs nothing leaves nothing stale behind.
  ::unlink(file_.c_str());
  slots_[0]->set("INFO");
  slots_[1]->set(subsystems_);
  slots_[2]->set(escape_percent(file_));
  lib_.fn.ResetDebugInit();
  struct Restore {
    const Library& lib;
    std::vector<std::unique_ptr<EnvSlot>>& slots;
    ~Restore() {
      for (auto& slot : slots) slot->restore();
      lib.fn.ResetDebugInit();
    }
  } restore{lib_, slots_};
  call();
  offset_ = 0;
  return read_new_lines();
}

void TuningCapture::discard() {
  if (mode_ == Mode::WholeRun) read_new_lines();
}

std::vector<std::string> TuningCapture::read_new_lines() {
  std::vector<std::string> lines;
  std::ifstream in(file_, std::ios::binary);
  if (!in) return lines;
  in.seekg(offset_);
  std::string line;
  while (std::getline(in, line)) {
    if (in.eof()) break;  // a partial last line: read it next time
    offset_ += static_cast<long long>(line.size()) + 1;
    lines.push_back(line);
  }
  if (mode_ == Mode::WholeRun && offset_ > (64LL << 20)) {
    // Give back the space of what was read; NCCL keeps appending at its own offset.
    int fd = ::open(file_.c_str(), O_WRONLY);
    if (fd >= 0) {
      ::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, offset_);
      ::close(fd);
    }
  }
  return lines;
}

}  // namespace cb::nccl
