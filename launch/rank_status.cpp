#include "launch/rank_status.hpp"

#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "common/error.hpp"
#include "common/temp_files.hpp"
#include "core/process_start.hpp"
#include "launch/rank_watch.hpp"

namespace cb {

namespace {

char g_status_path[4096] = {0};
bool g_prepared = false;
volatile sig_atomic_t g_recorded = 0;  // the first record is how the rank ended: kept

// Writes `text` to the status file in one write; async-signal-safe.
void write_status(const char* text, std::size_t len) noexcept {
  if (!g_status_path[0]) return;
  int fd = ::open(g_status_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return;
  g_recorded = 1;
  ssize_t ignored = ::write(fd, text, len);
  (void)ignored;
  ::close(fd);
}

// CLOCK_REALTIME in nanoseconds; async-signal-safe.
std::int64_t wall_clock_ns() noexcept {
  struct timespec ts {};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Appends the decimal digits of `v` (>= 0) to buf at len; async-signal-safe.
std::size_t put_number(char* buf, std::size_t len, std::int64_t v) {
  char digits[24];
  int k = 0;
  if (v < 0) v = 0;
  do {
    digits[k++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v && k < 23);
  while (k) buf[len++] = digits[--k];
  return len;
}

// "signal 15 <ns>\n" / "exit 4 <ns>\n" without snprintf (not async-signal-safe).
std::size_t format_status_line(char* buf, const char* word, int n, std::int64_t when_ns) {
  std::size_t len = 0;
  while (*word) buf[len++] = *word++;
  buf[len++] = ' ';
  len = put_number(buf, len, n);
  buf[len++] = ' ';
  len = put_number(buf, len, when_ns);
  buf[len++] = '\n';
  return len;
}

void on_stop_signal(int sig) {
  remove_temp_files();
  record_rank_signal(sig);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

void end_rank_cleanly_on_signals() {
  rank_status_wanted();  // prepares the file name outside the handler
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    if (::sigaction(s, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    ::sigaction(s, &sa, nullptr);
  }
}

bool rank_status_wanted() {
  if (!g_prepared) {
    g_prepared = true;
    const char* dir = std::getenv(kRankStatusEnv);
    // A rank on another host than its parent may not see the directory: it then reports its
    // failures itself, as without a parent.
    if (dir && *dir && ::access(dir, W_OK) == 0) {
      std::string path = std::string(dir) + "/status-" + std::to_string(detect_launch().rank);
      if (path.size() < sizeof(g_status_path)) {
        std::memcpy(g_status_path, path.c_str(), path.size() + 1);
      }
      connect_rank_watch(detect_launch().rank);
    }
  }
  return g_status_path[0] != 0;
}

namespace {
std::atomic<void (*)(const char*, int)> g_farewell{nullptr};
}  // namespace

void record_rank_exit(int code, const std::string& message) noexcept {
  // Peers without a commbench parent (env://) hear of it too: a rank whose watchdog fired is
  // then named as such, not as killed.
  if (auto f = g_farewell.load()) f("exit", code);
  if (g_recorded) return;
  const std::int64_t when_ns = wall_clock_ns();
  char head[64];
  std::size_t len = format_status_line(head, "exit", code, when_ns);
  std::string text(head, len);
  text += message;
  write_status(text.data(), text.size());
}

void set_rank_farewell(void (*farewell)(const char* how, int code)) noexcept {
  g_farewell.store(farewell);
}

void record_rank_signal(int sig) noexcept {
  if (auto f = g_farewell.load()) f("signal", sig);
  if (g_recorded) return;
  char buf[64];
  write_status(buf, format_status_line(buf, "signal", sig, wall_clock_ns()));
}

void record_rank_code(int code) noexcept {
  if (auto f = g_farewell.load()) f("exit", code);
  if (g_recorded) return;
  char buf[64];
  write_status(buf, format_status_line(buf, "exit", code, wall_clock_ns()));
}

namespace {

struct StatusFile {
  bool found = false;
  bool signaled = false;
  int code = 0;
  std::string message;
  std::int64_t when_ns = 0;  // when the rank failed; 0 for a rank that left no file
};

StatusFile read_status_file(const std::string& dir, int rank) {
  StatusFile f;
  const std::string path = dir + "/status-" + std::to_string(rank);
  std::ifstream in(path);
  std::string first;
  if (!std::getline(in, first)) return f;
  std::istringstream head(first);
  std::string word;
  if (!(head >> word >> f.code)) return f;
  f.found = true;
  f.signaled = word == "signal";
  if (!(head >> f.when_ns)) f.when_ns = 1;
  std::ostringstream rest;
  rest << in.rdbuf();
  f.message = rest.str();
  while (!f.message.empty() && f.message.back() == '\n') f.message.pop_back();
  return f;
}

// What a rank's status file says, into `e`; false when it left none.
bool apply_status_file(const StatusFile& f, RankExit& e) {
  if (!f.found) return false;
  e.signaled = f.signaled;
  e.code = f.code;
  // A rank ended by a catchable signal was stopped: by the launcher after another rank failed,
  // or with the whole run by the user.
  e.stopped_by_launcher = f.signaled;
  e.message = f.message;
  return true;
}

// The exits in the order the ranks failed (stable: equal times keep their order).
std::vector<RankExit> in_failure_order(std::vector<std::pair<std::int64_t, RankExit>> timed) {
  std::stable_sort(timed.begin(), timed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<RankExit> exits;
  for (auto& [t, e] : timed) exits.push_back(std::move(e));
  return exits;
}

}  // namespace

std::vector<RankExit> read_rank_status(const std::string& dir, int nranks, int fallback_signal,
                                       int fallback_code,
                                       const std::map<int, std::int64_t>& ended_ns) {
  // When the parent saw a rank that left no file end; unknown: first.
  auto ended_at = [&](int rank) -> std::int64_t {
    auto it = ended_ns.find(rank);
    return it != ended_ns.end() ? it->second : 0;
  };
  std::vector<std::pair<std::int64_t, RankExit>> timed;
  for (int r = 0; r < nranks; ++r) {
    RankExit e;
    e.rank = r;
    StatusFile f = read_status_file(dir, r);
    if (!apply_status_file(f, e)) {
      e.signaled = fallback_signal != 0;
      e.code = e.signaled ? fallback_signal : fallback_code;
      e.guessed = true;
    }
    timed.emplace_back(f.found ? f.when_ns : ended_at(r), e);
  }
  // In the order the ranks failed, so that of equally telling failures the first one is named.
  std::vector<RankExit> exits = in_failure_order(std::move(timed));
  // Two ranks killed outright whose ends the parent saw within 1 ms: a launcher that kills the
  // others after one died can finish doing so before the dying process's own end is complete,
  // so their order says nothing.
  if (exits.size() >= 2) {
    RankExit& a = exits[0];
    RankExit& b = exits[1];
    const std::int64_t t0 = ended_at(a.rank), t1 = ended_at(b.rank);
    const bool silent = a.signaled && !a.stopped_by_launcher && a.message.empty() && b.signaled &&
                        !b.stopped_by_launcher && b.message.empty() && a.code == b.code;
    if (silent && t0 > 0 && t1 - t0 < 1'000'000) {
      a.tied_with = b.rank;
      b.tied_with = a.rank;
    }
  }
  return exits;
}

std::vector<RankExit> read_watched_ranks(const std::string& dir,
                                         const std::map<int, std::string>& hosts,
                                         const std::map<int, std::int64_t>& ended_ns) {
  std::set<std::string> distinct;
  for (const auto& [rank, host] : hosts) distinct.insert(host);
  std::vector<std::pair<std::int64_t, RankExit>> timed;
  for (const auto& [rank, host] : hosts) {
    RankExit e;
    e.rank = rank;
    if (distinct.size() > 1) e.host = host;
    StatusFile f = read_status_file(dir, rank);
    std::int64_t when = f.when_ns;
    if (!apply_status_file(f, e)) {
      e.unreported = true;
      auto it = ended_ns.find(rank);
      when = it != ended_ns.end() ? it->second : std::numeric_limits<std::int64_t>::max();
    }
    timed.emplace_back(when, e);
  }
  return in_failure_order(std::move(timed));
}

void attach_rank_messages(const std::string& dir, std::vector<RankExit>& exits,
                          const std::vector<std::int64_t>& reaped_ns) {
  std::vector<std::pair<std::int64_t, RankExit>> timed;
  for (std::size_t i = 0; i < exits.size(); ++i) {
    RankExit e = exits[i];
    std::int64_t when = i < reaped_ns.size() ? reaped_ns[i] : 0;
    StatusFile f = read_status_file(dir, e.rank);
    if (f.found && !e.signaled) {
      e.message = f.message;
      when = f.when_ns;  // when it failed, not when it had finished unwinding
    }
    timed.emplace_back(when, e);
  }
  exits = in_failure_order(std::move(timed));
}

std::int64_t status_clock_ns() noexcept {
  return wall_clock_ns();
}

int report_rank_verdict(const std::vector<RankExit>& exits, const std::map<int, double>& stopped) {
  // One line, the first cause; what the other ranks said is their reaction to it (a peer's
  // "Connection reset by peer") and is not shown.
  const RunVerdict v = name_stopped_rank(judge(exits), exits, stopped, {});
  if (v.exit_code != 0 && !v.message.empty()) {
    std::fprintf(stderr, "commbench: %s\n", v.message.c_str());
  }
  return v.exit_code;
}

}  // namespace cb
