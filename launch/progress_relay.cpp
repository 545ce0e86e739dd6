#include "launch/progress_relay.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/checked_write.hpp"
#include "launch/stop_signals.hpp"

namespace cb {

namespace {

bool socket_address(const std::string& path, sockaddr_un& addr) {
  if (path.empty() || path.size() >= sizeof(addr.sun_path)) return false;
  addr = {};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return true;
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

std::string encode_progress_event(const ProgressEvent& e) {
  if (e.finished) return fmt::format("end\t{}", e.total);
  std::string label = e.label;
  for (char& c : label) {
    if (c == '\t' || c == '\n') c = ' ';
  }
  return fmt::format("case\t{}\t{}\t{:.9g}\t{:.9g}\t{:.9g}\t{}", e.index, e.total, e.planned_done,
                     e.planned_current, e.planned_total, label);
}

std::optional<ProgressEvent> decode_progress_event(std::string_view text) {
  std::vector<std::string> f;
  std::string cur;
  for (char c : text) {
    if (c == '\t') {
      f.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  f.push_back(cur);
  ProgressEvent e;
  try {
    if (f.size() == 2 && f[0] == "end") {
      e.finished = true;
      e.total = std::stoul(f[1]);
      return e;
    }
    if (f.size() != 7 || f[0] != "case") return std::nullopt;
    e.index = std::stoul(f[1]);
    e.total = std::stoul(f[2]);
    e.planned_done = std::stod(f[3]);
    e.planned_current = std::stod(f[4]);
    e.planned_total = std::stod(f[5]);
    e.label = f[6];
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (e.index == 0 || e.index > e.total) return std::nullopt;
  return e;
}

ProgressRelay::ProgressRelay(ProgressDisplay::Style style, const std::string& dir)
    : display_(style) {
  if (style == ProgressDisplay::Style::Off) return;
  sockaddr_un addr{};
  const std::string path = dir + "/progress.sock";
  if (!socket_address(path, addr) || ::pipe2(stop_pipe_, O_CLOEXEC) != 0) return;
  sock_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (sock_ < 0 || ::bind(sock_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close_fd(sock_);
    return;
  }
  if (style == ProgressDisplay::Style::Bar) {
    if (::pipe2(err_pipe_, O_CLOEXEC) != 0) err_pipe_[0] = err_pipe_[1] = -1;
    stdout_tty_ = ::isatty(STDOUT_FILENO) == 1;
    if (stdout_tty_ && ::pipe2(out_pipe_, O_CLOEXEC) != 0) out_pipe_[0] = out_pipe_[1] = -1;
  }
  path_ = path;
  thread_ = std::thread([this] { loop(); });
}

ProgressRelay::~ProgressRelay() {
  finish();
  for (int* fd : {&sock_, &stop_pipe_[0], &stop_pipe_[1], &err_pipe_[0], &err_pipe_[1],
                  &out_pipe_[0], &out_pipe_[1]}) {
    close_fd(*fd);
  }
}

std::string ProgressRelay::finish() {
  close_rank_stderr();
  if (thread_.joinable()) {
    ssize_t ignored = ::write(stop_pipe_[1], "x", 1);
    (void)ignored;
    thread_.join();
  }
  std::lock_guard lock(out_mu_);
  if (!out_partial_.empty()) {
    try {
      display_.print_to(STDOUT_FILENO, out_partial_, "standard output");
    } catch (const std::exception& e) {
      if (out_error_.empty()) out_error_ = e.what();
    }
    out_partial_.clear();
  }
  display_.clear();
  return out_error_;
}

void ProgressRelay::close_rank_stderr() {
  close_fd(err_pipe_[1]);
  close_fd(out_pipe_[1]);
}

void ProgressRelay::print(std::string_view line) {
  display_.print(line);
}

void ProgressRelay::pass_stdout(std::string_view data) {
  if (!stdout_tty_) return write_all(STDOUT_FILENO, data, "standard output");
  std::lock_guard lock(out_mu_);
  out_partial_.append(data);
  const std::size_t end = out_partial_.rfind('\n');
  if (end == std::string::npos) return;
  const std::string lines = out_partial_.substr(0, end + 1);
  out_partial_.erase(0, end + 1);
  display_.print_to(STDOUT_FILENO, lines, "standard output");
}

void ProgressRelay::receive(ProgressTracker& tracker) {
  char buf[4096];
  for (;;) {
    ssize_t n = ::recv(sock_, buf, sizeof(buf), MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    auto e = decode_progress_event(std::string_view(buf, static_cast<std::size_t>(n)));
    if (!e) continue;
    const auto now = ProgressTracker::Clock::now();
    if (e->finished) {
      if (!tracker.active()) continue;
      tracker.finished(now);
      display_.finish(tracker.state(now));
    } else if (!tracker.done()) {
      tracker.started(e->index, e->total, e->label, e->planned_done, e->planned_current,
                      e->planned_total, now);
      display_.show(tracker.state(now));
    }
  }
}

// Shows the ranks' complete lines above the bar.
void ProgressRelay::on_stderr(std::string_view data, std::string& partial) {
  partial.append(data);
  std::size_t end = partial.rfind('\n');
  if (end != std::string::npos) {
    display_.print(std::string_view(partial).substr(0, end + 1));
    partial.erase(0, end + 1);
  }
}

// Passes the ranks' stdout on. A write error is kept for the launcher, and the pipe still
// drained so that no rank blocks.
void ProgressRelay::on_stdout(std::string_view data) {
  try {
    pass_stdout(data);
  } catch (const std::exception& e) {
    std::lock_guard lock(out_mu_);
    if (out_error_.empty()) out_error_ = e.what();
  }
}

namespace {

// Reads what `fd` has now: data goes to `handle`; false at its end.
template <typename Handle>
bool read_some(int fd, Handle&& handle) {
  char buf[65536];
  ssize_t n = ::read(fd, buf, sizeof(buf));
  if (n < 0) return errno == EINTR || errno == EAGAIN;
  if (n == 0) return false;
  handle(std::string_view(buf, static_cast<std::size_t>(n)));
  return true;
}

// Reads `fd` to its end or until it has nothing more now.
template <typename Handle>
void drain(int fd, Handle&& handle) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    handle(std::string_view(buf, static_cast<std::size_t>(n)));
  }
}

}  // namespace

void ProgressRelay::loop() {
  block_stop_signals_in_this_thread();  // they must interrupt the launcher's own wait
  ProgressTracker tracker;
  const bool bar = display_.style() == ProgressDisplay::Style::Bar;
  const int tick_ms = bar ? 1000 : static_cast<int>(ProgressDisplay::kLineInterval * 1000);
  std::string partial;
  auto on_err = [&](std::string_view d) { on_stderr(d, partial); };
  auto on_out = [&](std::string_view d) { on_stdout(d); };
  bool err_open = err_pipe_[0] >= 0, out_open = out_pipe_[0] >= 0;
  for (;;) {
    pollfd fds[4] = {{stop_pipe_[0], POLLIN, 0},
                     {sock_, POLLIN, 0},
                     {err_open ? err_pipe_[0] : -1, POLLIN, 0},
                     {out_open ? out_pipe_[0] : -1, POLLIN, 0}};
    const int timeout = tracker.active() && !tracker.done() ? tick_ms : -1;
    int ready = ::poll(fds, 4, timeout);
    if (ready < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (ready == 0) {
      display_.show(tracker.state(ProgressTracker::Clock::now()));
      continue;
    }
    if (fds[1].revents) receive(tracker);
    if (out_open && fds[3].revents) out_open = read_some(out_pipe_[0], on_out);
    if (err_open && fds[2].revents) err_open = read_some(err_pipe_[0], on_err);
    if (fds[0].revents) break;
  }
  // The ranks have ended: what they still wrote or sent is shown before the bar goes.
  receive(tracker);
  if (out_open) drain(out_pipe_[0], on_out);
  if (err_open) drain(err_pipe_[0], on_err);
  if (!partial.empty()) display_.print(partial);
}

ProgressSender::ProgressSender() {
  const char* path = std::getenv(kProgressEnv);
  if (!path || !*path) return;
  asked_ = true;
  sockaddr_un addr{};
  if (!socket_address(path, addr)) return;
  fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close_fd(fd_);
  }
}

ProgressSender::~ProgressSender() {
  close_fd(fd_);
}

void ProgressSender::send(const ProgressEvent& e) noexcept {
  if (fd_ < 0) return;
  try {
    const std::string text = encode_progress_event(e);
    ssize_t ignored = ::send(fd_, text.data(), text.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    (void)ignored;
  } catch (...) {
  }
}

}  // namespace cb
