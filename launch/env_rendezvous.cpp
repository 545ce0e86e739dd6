#include "launch/env_rendezvous.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <exception>
#include <cerrno>
#include <cstring>
#include <set>
#include <thread>

#include "common/error.hpp"
#include "common/host_name.hpp"
#include "launch/env_wire.hpp"
#include "launch/peer_loss.hpp"
#include "launch/rank_exits.hpp"
#include "launch/rank_status.hpp"

namespace cb {

namespace {

using env_wire::Clock;
using env_wire::Type;

// The wire's version: the first line of a hello or a complaint. 2: a hello also carries the plan
// (its digest, then its options).
constexpr const char* kMagic = "commbench-env/2";
constexpr const char* kMagicFamily = "commbench-env/";
constexpr std::chrono::milliseconds kLossWait{3000};

std::atomic<EnvRendezvous*> g_watching{nullptr};
// Set once this process has met rank 0, been refused by it, or told it why it fails: it tells
// rank 0 nothing more.
std::atomic<bool> g_rank0_heard{false};
// A failure before the command's --timeout is known: the most a process waits to tell rank 0.
constexpr double kUnknownTimeout = 300;
void farewell(const char* how, int code) noexcept;

Clock::time_point deadline_after(double seconds) {
  return Clock::now() + std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
}

// How soon a silent peer's host counts as gone: a third of the timeout, 3 to 30 s.
int silence_seconds(double timeout) {
  return static_cast<int>(std::clamp(timeout / 3, 3.0, 30.0));
}

std::string where(const std::string& addr, int port) { return addr + ":" + std::to_string(port); }

[[noreturn]] void refuse(int code, const std::string& line) {
  throw Error(code == kExitUsage ? ErrorKind::Usage : ErrorKind::Runtime, line);
}

std::string ranks_text(const std::vector<int>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size() && i < 16; ++i)
    out += (i ? ", " : "") + std::to_string(ranks[i]);
  if (ranks.size() > 16) out += fmt::format(" and {} more", ranks.size() - 16);
  return out;
}

}  // namespace

double rendezvous_seconds(double timeout_seconds) {
  return std::max(timeout_seconds - 2.0, timeout_seconds * 0.9);
}

EnvRendezvous::EnvRendezvous(const LaunchInfo& launch, double timeout_seconds, PlanFingerprint plan)
    : rank_(launch.rank), size_(launch.size), timeout_(timeout_seconds), plan_(std::move(plan)) {
  g_rank0_heard.store(true);  // from now on rank 0 answers, or this rank says why not
  hosts_.assign(static_cast<std::size_t>(size_), std::string());
  hosts_[static_cast<std::size_t>(rank_)] = host_name();
  if (::pipe2(stop_pipe_, O_CLOEXEC) != 0) runtime_error("pipe: {}", std::strerror(errno));
  if (size_ == 1) return;
  if (rank_ == 0) {
    serve(launch.master_port, rendezvous_seconds(timeout_seconds));
  } else {
    join(launch, rendezvous_seconds(timeout_seconds));
  }
}

EnvRendezvous::~EnvRendezvous() {
  if (g_watching.load() == this) {
    set_rank_farewell(nullptr);
    g_watching.store(nullptr);
  }
  // A failure unwinding through here is often a peer's end seen first by a library: the watcher
  // gets a moment to see that end too, and then names it instead.
  if (watcher_.joinable() && std::uncaught_exceptions() > 0) wait_for_peer_loss(kLossWait);
  if (watcher_.joinable()) {
    char c = 0;
    [[maybe_unused]] ssize_t w = ::write(stop_pipe_[1], &c, 1);
    watcher_.join();
  }
  for (int fd : fds_) {
    if (fd < 0) continue;
    env_wire::send_frame(fd, Type::Bye, "");
    ::close(fd);
  }
  for (int fd : stop_pipe_)
    if (fd >= 0) ::close(fd);
}

std::string EnvRendezvous::who(int rank) const {
  const std::set<std::string> distinct(hosts_.begin(), hosts_.end());
  const std::string& host = hosts_[static_cast<std::size_t>(rank)];
  if (distinct.size() < 2 || host.empty()) return fmt::format("rank {}", rank);
  return fmt::format("rank {} on host {}", rank, host);
}

void EnvRendezvous::serve(int port, double seconds) {
  const auto deadline = deadline_after(seconds);
  const int listen_fd = env_wire::listen_on(port);
  if (listen_fd < 0) {
    const int err = errno;
    runtime_error(
        "env:// rendezvous: rank 0 cannot listen on MASTER_PORT {}: {}{}", port, std::strerror(err),
        err == EADDRINUSE ? " (another process holds it: give this job a free MASTER_PORT)" : "");
  }
  fds_.assign(static_cast<std::size_t>(size_), -1);
  std::vector<std::string> raw_rank(static_cast<std::size_t>(size_));
  // Every rank that joined hears the line that ends the job, then this rank throws it.
  auto fail = [&](int code, const std::string& line, int extra_fd = -1) {
    int told = 0;
    for (int fd : fds_) {
      if (fd >= 0 && env_wire::send_frame(fd, Type::Refusal, std::to_string(code) + line)) ++told;
    }
    if (extra_fd >= 0) {
      env_wire::send_frame(extra_fd, Type::Refusal, std::to_string(code) + line);
      ::close(extra_fd);
      ++told;
    }
    // Ranks still on their way hear it too, for a few seconds (until every rank has), rather
    // than retrying until their timeout.
    const auto grace = std::min(deadline, deadline_after(3));
    for (pollfd pfd{listen_fd, POLLIN, 0};
         code == kExitUsage && told < size_ - 1 && Clock::now() < grace;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(grace - Clock::now());
      if (::poll(&pfd, 1, static_cast<int>(std::max<long long>(left.count(), 0))) <= 0) continue;
      if (int late = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC); late >= 0) {
        env_wire::send_frame(late, Type::Refusal, std::to_string(code) + line);
        ::close(late);
        ++told;
      }
    }
    ::close(listen_fd);
    refuse(code, line);
  };
  int joined = 1;
  while (joined < size_) {
    pollfd pfd{listen_fd, POLLIN, 0};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    int r = left.count() > 0 ? ::poll(&pfd, 1, static_cast<int>(left.count())) : 0;
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      std::vector<int> missing;
      for (int k = 1; k < size_; ++k)
        if (fds_[static_cast<std::size_t>(k)] < 0) missing.push_back(k);
      // A process whose variables were wrong has told rank 0 unless it could not reach it.
      fail(kExitRuntime,
           fmt::format("env:// rendezvous: {} of WORLD_SIZE {} ranks joined rank 0 on port {} "
                       "within {:g} s; never came: rank{} {} (not started, or unable to reach "
                       "rank 0 to say why: MASTER_ADDR or MASTER_PORT missing there, or not rank "
                       "0's; its own log says which)",
                       joined, size_, port, seconds, missing.size() > 1 ? "s" : "",
                       ranks_text(missing)));
    }
    int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    // A process that is not a commbench rank (a health probe) is dropped after a few seconds.
    auto frame = env_wire::read_frame(fd, std::min(deadline, deadline_after(5)));
    auto lines = frame ? env_wire::split_lines(frame->payload) : std::vector<std::string>{};
    const bool hello = frame && frame->type == Type::Hello;
    if (lines.size() < 4 || lines[0].rfind(kMagicFamily, 0) != 0 ||
        (!hello && frame->type != Type::Complaint)) {
      ::close(fd);
      continue;
    }
    if (lines[0] != kMagic) {
      // Every version so far puts the host fourth in a hello, second in a complaint.
      fail(kExitUsage,
           fmt::format("env:// rendezvous: the process on host {} runs another commbench build "
                       "(its rendezvous speaks {}, rank 0's {}); every process must run the same",
                       hello ? lines[3] : lines[1], lines[0], kMagic),
           fd);
    }
    if (!hello) {
      if (lines.size() != 5) {
        ::close(fd);
        continue;
      }
      std::string problem = lines[3];
      if (problem.rfind("env:// launch: ", 0) == 0) problem.erase(0, 15);
      const std::string process =
          lines[2].empty() ? fmt::format("a process without RANK on host {}", lines[1])
                           : fmt::format("the process with RANK={} on host {}", lines[2], lines[1]);
      const int code = std::atoi(lines[4].c_str());
      fail(code >= kExitRuntime && code <= kExitInconclusive ? code : kExitUsage,
           fmt::format("env:// launch: {}: {}", process, problem), fd);
    }
    if (lines.size() < 5) {
      ::close(fd);
      continue;
    }
    const std::string& host = lines[3];
    const std::string& rank_text = lines[1];
    const int rank = std::atoi(rank_text.c_str());
    const int world = std::atoi(lines[2].c_str());
    if (world != size_) {
      fail(kExitUsage,
           fmt::format("env:// rendezvous: WORLD_SIZE differs between ranks: {} on host {} (RANK "
                       "{}), {} on host {} (rank 0); every process must be given the same",
                       world, host, rank_text, size_, hosts_[0]),
           fd);
    }
    if (rank <= 0 || rank >= size_ || fds_[static_cast<std::size_t>(rank)] >= 0) {
      const std::string other = rank == 0 ? hosts_[0] : hosts_[static_cast<std::size_t>(rank)];
      fail(kExitUsage,
           fmt::format("env:// rendezvous: two processes have RANK={}: on host {} and on host {}; "
                       "each rank must be given to one process",
                       rank_text, other, host),
           fd);
    }
    if (lines[4] != plan_.digest()) {
      // Its options follow the digest, one a line.
      std::size_t options_at = 0;
      for (std::size_t i = 0; i < 5; ++i) options_at += lines[i].size() + 1;
      auto theirs = PlanFingerprint::decode(
          options_at < frame->payload.size() ? frame->payload.substr(options_at) : std::string());
      auto diff = theirs ? first_difference(*theirs, plan_)
                         : PlanDifference{"its plan", "unreadable", "readable"};
      if (diff) {
        fail(kExitUsage,
             fmt::format("env:// rendezvous: rank {} on host {} runs another plan than rank 0: "
                         "{} {} there, {} on rank 0; every process must be given the same "
                         "options",
                         rank_text, host, diff->option, shown_value(diff->theirs),
                         shown_value(diff->ours)),
             fd);
      }
    }
    env_wire::detect_silence(fd, silence_seconds(timeout_));
    fds_[static_cast<std::size_t>(rank)] = fd;
    hosts_[static_cast<std::size_t>(rank)] = host;
    // Rank 0 is reached where the others reached it; a peer on another host tells best.
    if (env_wire::peer_address(fd).rfind("127.", 0) != 0 || address_ == "127.0.0.1")
      address_ = env_wire::local_address(fd);
    ++joined;
  }
  ::close(listen_fd);
  const std::string welcome = env_wire::join_lines(hosts_);
  for (int fd : fds_)
    if (fd >= 0) env_wire::send_frame(fd, Type::Welcome, welcome);
}

void EnvRendezvous::join(const LaunchInfo& launch, double seconds) {
  const auto deadline = deadline_after(seconds);
  const std::string at = where(launch.master_addr, launch.master_port);
  std::string resolve_error, connect_error;
  bool resolved = false;
  auto pause = std::chrono::milliseconds(50);
  int fd = -1;
  while (fd < 0) {
    if (Clock::now() >= deadline) {
      if (!resolved) {
        usage_error("env:// rendezvous: MASTER_ADDR '{}' does not resolve to an IPv4 address "
                    "({}; tried for {:g} s)",
                    launch.master_addr, resolve_error, seconds);
      }
      runtime_error("env:// rendezvous: rank {} could not reach rank 0 at MASTER_ADDR:MASTER_PORT "
                    "{} within {:g} s ({}): is rank 0 running, and is the port open?",
                    rank_, at, seconds, connect_error);
    }
    const std::string addr = env_wire::resolve(launch.master_addr, resolve_error);
    if (!addr.empty()) {
      resolved = true;
      fd = env_wire::connect_to(addr, launch.master_port,
                                std::min(deadline, deadline_after(5)), connect_error);
    }
    if (fd < 0) {
      std::this_thread::sleep_for(std::min(pause, std::chrono::duration_cast<std::chrono::milliseconds>(
                                                      deadline - Clock::now() + std::chrono::milliseconds(1))));
      pause = std::min(pause * 2, std::chrono::milliseconds(1000));
    }
  }
  fds_ = {fd};
  std::string hello =
      env_wire::join_lines({kMagic, std::to_string(rank_), std::to_string(size_),
                            hosts_[static_cast<std::size_t>(rank_)], plan_.digest()});
  if (!plan_.options.empty()) {
    hello += '\n';
    hello += plan_.encode();
  }
  env_wire::send_frame(fd, Type::Hello, hello);
  // Rank 0 answers by its own deadline, which may fall a little after this rank's: it then
  // says what went wrong, better than this rank guessing.
  const auto answer_by =
      deadline + std::chrono::milliseconds(static_cast<long long>(
                     1000 * std::min(1.5, (timeout_ - rendezvous_seconds(timeout_)) / 2)));
  auto reply = env_wire::read_frame(fd, answer_by);
  if (!reply) {
    runtime_error("env:// rendezvous: rank 0 at {} did not let rank {} in within {:g} s (it "
                  "closed the connection or did not answer)",
                  at, rank_, seconds);
  }
  if (reply->type == Type::Refusal && !reply->payload.empty()) {
    refuse(reply->payload[0] - '0', reply->payload.substr(1));
  }
  auto hosts = env_wire::split_lines(reply->payload);
  if (reply->type != Type::Welcome || hosts.size() != static_cast<std::size_t>(size_)) {
    runtime_error("env:// rendezvous: the process at {} is not rank 0 of this commbench job", at);
  }
  hosts_ = hosts;
  address_ = env_wire::local_address(fd);
  env_wire::detect_silence(fd, silence_seconds(timeout_));
}

std::vector<std::string> EnvRendezvous::allgather(const std::string& mine) {
  if (watcher_.joinable()) runtime_error("internal: the env:// rendezvous is watching only");
  if (size_ == 1) return {mine};
  const auto deadline = deadline_after(timeout_);
  auto lost = [&](int rank) {
    runtime_error("env:// rendezvous: {} ended without a word during start-up", who(rank));
  };
  if (rank_ != 0) {
    if (!env_wire::send_frame(fds_[0], Type::Data, mine)) lost(0);
    auto frame = env_wire::read_frame(fds_[0], deadline);
    if (!frame || frame->type != Type::Data) lost(0);
    auto all = env_wire::unpack(frame->payload);
    if (!all || all->size() != static_cast<std::size_t>(size_)) lost(0);
    return *all;
  }
  std::vector<std::string> all(static_cast<std::size_t>(size_));
  all[0] = mine;
  for (int k = 1; k < size_; ++k) {
    auto frame = env_wire::read_frame(fds_[static_cast<std::size_t>(k)], deadline);
    if (!frame || frame->type != Type::Data) lost(k);
    all[static_cast<std::size_t>(k)] = std::move(frame->payload);
  }
  const std::string packed = env_wire::pack(all);
  for (int k = 1; k < size_; ++k) {
    if (!env_wire::send_frame(fds_[static_cast<std::size_t>(k)], Type::Data, packed)) lost(k);
  }
  return all;
}

void EnvRendezvous::barrier() { allgather(""); }

void EnvRendezvous::max(double* values, std::size_t n) {
  std::string mine(reinterpret_cast<const char*>(values), n * sizeof(double));
  for (const auto& s : allgather(mine)) {
    for (std::size_t i = 0; i < n; ++i) {
      double v;
      std::memcpy(&v, s.data() + i * sizeof v, sizeof v);
      values[i] = std::max(values[i], v);
    }
  }
}

void EnvRendezvous::sum(std::uint64_t* values, std::size_t n) {
  std::string mine(reinterpret_cast<const char*>(values), n * sizeof(std::uint64_t));
  std::vector<std::uint64_t> total(n, 0);
  for (const auto& s : allgather(mine)) {
    for (std::size_t i = 0; i < n; ++i) {
      std::uint64_t v;
      std::memcpy(&v, s.data() + i * sizeof v, sizeof v);
      total[i] += v;
    }
  }
  std::copy(total.begin(), total.end(), values);
}

void EnvRendezvous::send(int, const void*, std::size_t, int) {
  runtime_error("internal: the env:// rendezvous carries no point-to-point messages");
}

void EnvRendezvous::recv(int, void*, std::size_t, int) {
  runtime_error("internal: the env:// rendezvous carries no point-to-point messages");
}

void EnvRendezvous::watch() {
  if (size_ == 1 || watcher_.joinable()) return;
  expect_peer_loss_reports();
  watcher_ = std::thread([this] { watch_loop(); });
  g_watching.store(this);
  set_rank_farewell(&farewell);
}

void EnvRendezvous::watch_loop() {
  // Which rank each polled connection leads to: rank 0 watches every peer, a peer rank 0.
  std::vector<int> ranks;
  std::vector<int> open_fds;
  for (int r = 0; r < static_cast<int>(fds_.size()); ++r) {
    if (fds_[static_cast<std::size_t>(r)] < 0) continue;
    ranks.push_back(rank_ == 0 ? r : 0);
    open_fds.push_back(fds_[static_cast<std::size_t>(r)]);
  }
  const std::set<std::string> distinct(hosts_.begin(), hosts_.end());
  for (;;) {
    std::vector<pollfd> pfds{{stop_pipe_[0], POLLIN, 0}};
    for (int fd : open_fds) pfds.push_back({fd, POLLIN, 0});  // poll skips fd -1
    if (::poll(pfds.data(), pfds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (pfds[0].revents) return;
    for (std::size_t i = 1; i < pfds.size(); ++i) {
      if (!pfds[i].revents || open_fds[i - 1] < 0) continue;
      const int fd = open_fds[i - 1];
      auto frame = env_wire::read_frame(fd, deadline_after(5));
      RankExit e;
      e.rank = ranks[i - 1];
      e.unreported = true;
      std::string line;
      if (frame && frame->type == Type::Bye && frame->payload.empty()) {
        open_fds[i - 1] = -1;  // it ended normally; its descriptor closes with this object
        continue;
      } else if (frame && frame->type == Type::Bye) {
        // "exit 4" (its watchdog fired) or "signal 15" (stopped): what it said as it ended.
        e.unreported = false;
        e.signaled = frame->payload.rfind("signal ", 0) == 0;
        e.code = std::atoi(frame->payload.c_str() + frame->payload.find(' ') + 1);
      } else if (frame && frame->type == Type::Lost) {
        line = frame->payload;  // rank 0 names the peer it lost
      } else if (frame) {
        continue;  // nothing else is sent once watching
      }
      if (line.empty()) {
        if (distinct.size() > 1) e.host = hosts_[static_cast<std::size_t>(e.rank)];
        line = describe(e);
      }
      if (rank_ == 0) {
        for (int other : open_fds)
          if (other >= 0 && other != fd) env_wire::send_frame(other, Type::Lost, line);
      }
      report_peer_loss(line);
      return;  // the main thread reports it
    }
  }
}

namespace {

// Async-signal-safe: a goodbye that says how this rank ends ("exit 4", "signal 15").
void farewell(const char* how, int code) noexcept {
  EnvRendezvous* r = g_watching.load();
  if (r) r->say_farewell(how, code);
}

}  // namespace

void EnvRendezvous::say_farewell(const char* how, int code) noexcept {
  char frame[64];
  std::size_t n = 5;
  for (const char* p = how; *p && n < 40; ++p) frame[n++] = *p;
  frame[n++] = ' ';
  char digits[12];
  int d = 0;
  unsigned v = static_cast<unsigned>(code < 0 ? 0 : code);
  do {
    digits[d++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v && d < 11);
  while (d) frame[n++] = digits[--d];
  const std::uint32_t len = htonl(static_cast<std::uint32_t>(n - 4));
  std::memcpy(frame, &len, 4);
  frame[4] = static_cast<char>(Type::Bye);
  for (int fd : fds_) {
    if (fd >= 0) [[maybe_unused]] ssize_t w = ::send(fd, frame, n, MSG_NOSIGNAL);
  }
}

namespace {

// Rank 0 that cannot start: the ranks that reach it within `deadline` hear why (all
// `world` - 1 of them, where known, end the wait early) rather than retrying until their
// timeout.
void refuse_ranks_until(const LaunchInfo& launch, Clock::time_point deadline, int world,
                        const std::string& line) {
  const int fd = env_wire::listen_on(launch.master_port);
  if (fd < 0) return;  // the port is another's: the ranks time out naming rank 0
  for (int told = 0; told < world - 1 && Clock::now() < deadline;) {
    pollfd pfd{fd, POLLIN, 0};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (::poll(&pfd, 1, static_cast<int>(std::max<long long>(left.count(), 0))) <= 0) continue;
    int peer = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (peer < 0) continue;
    // Its hello first, so that a health probe is not counted.
    if (auto hello = env_wire::read_frame(peer, std::min(deadline, deadline_after(2)))) {
      env_wire::send_frame(peer, Type::Refusal, line);
      ++told;
    }
    ::close(peer);
  }
  ::close(fd);
}

}  // namespace

void tell_rendezvous_of_problem(const LaunchInfo& launch, double timeout_seconds, int code) {
  g_rank0_heard.store(true);
  const char* given = std::getenv("RANK");
  // The rank as given, or empty where RANK is not set (rank 0 then names the host alone).
  const std::string rank_text = given ? given : "";
  if (launch.master_addr.empty() || launch.master_port <= 0) return;
  const auto deadline = deadline_after(std::min(5.0, rendezvous_seconds(timeout_seconds)));
  const std::string problem = one_line(launch.env_problem);
  if (rank_text == "0") {
    // The ranks to tell, where WORLD_SIZE says (else as many as come).
    const char* world_text = std::getenv("WORLD_SIZE");
    const int world = world_text ? std::atoi(world_text) : 0;
    std::string line = problem;
    if (line.rfind("env:// launch: ", 0) == 0) line.erase(0, 15);
    refuse_ranks_until(launch, deadline, world > 0 ? world : 1 << 24,
                       fmt::format("{}env:// launch: rank 0 on host {} cannot start: {}", code,
                                   host_name(), line));
    return;
  }
  std::string error;
  while (Clock::now() < deadline) {
    const std::string addr = env_wire::resolve(launch.master_addr, error);
    int fd = addr.empty() ? -1 : env_wire::connect_to(addr, launch.master_port, deadline, error);
    if (fd >= 0) {
      env_wire::send_frame(fd, Type::Complaint,
                           env_wire::join_lines({kMagic, host_name(), one_line(rank_text), problem,
                                                 std::to_string(code)}));
      env_wire::read_frame(fd, deadline);  // rank 0's answer, so that it has read the complaint
      ::close(fd);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

void tell_rendezvous_of_failure(int code, const std::string& line) {
  if (g_rank0_heard.load()) return;  // it met rank 0, or told it already
  LaunchInfo launch = detect_launch();
  if (launch.kind != LaunchInfo::Kind::Env) return;
  launch.env_problem = line;
  tell_rendezvous_of_problem(launch, kUnknownTimeout, code);
}

}  // namespace cb
