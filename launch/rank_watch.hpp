// When each rank process ended, as its commbench parent sees it even through an MPI launcher:
// every rank connects to a Unix socket of the parent at start and keeps the connection open, so
// the kernel closes it the moment the rank ends, however it ends (SIGKILL included). A thread of
// the parent notes the time of each close; the first rank to end without a status file is the
// one that was killed first (the launcher then kills the others). On connecting, a rank says its
// rank and host name, so that a parent whose ranks span hosts (emulated ones, or any that share
// its file system) can name the host too. Ranks that cannot reach the socket are not watched.
// While ranks are connected the thread also looks, twice a second, whether a rank's process is
// stopped (SIGSTOP, a debugger): such a rank makes no progress, and the timeout its peers then
// hit is its doing, which only the parent can see. Once another rank has ended, a rank still
// stopped is sent SIGCONT, so that the launcher's SIGTERM, which waits in a stopped process,
// ends it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace cb {

// Set in the ranks' environment: the socket's path.
inline constexpr const char* kRankWatchEnv = "COMMBENCH_RANK_WATCH";

class RankWatch {
 public:
  // Listens at `dir`/watch.sock; does nothing when that path is too long for a socket.
  explicit RankWatch(const std::string& dir);
  RankWatch(const RankWatch&) = delete;
  RankWatch& operator=(const RankWatch&) = delete;
  ~RankWatch();
  const std::string& path() const { return path_; }  // empty when not watching
  // rank -> when its connection closed (status_clock_ns()).
  std::map<int, std::int64_t> ended();
  // rank -> host name, for every rank that connected.
  std::map<int, std::string> hosts();
  // rank -> seconds it had been stopped when it ended (or until now), for the ranks that were
  // stopped at their end (at most 1 s before it) after being stopped for at least 1 s.
  std::map<int, double> stopped();
  // Once the launcher has ended, so has every rank, but this thread may not have seen every
  // close yet (a loaded machine): waits until every rank that connected has ended, at most
  // `limit`.
  void wait_for_all_ended(std::chrono::milliseconds limit);

 private:
  void loop();
  void look_for_stopped(const std::map<int, int>& pids, std::int64_t now);  // rank -> pid
  struct StopSpan {
    std::int64_t since_ns = 0;
    std::int64_t until_ns = 0;  // 0: still stopped when last seen
    // Resumed by the watch once a peer had ended: the stop lasted to the job's end.
    bool resumed_here = false;
  };
  std::string path_;
  int listen_fd_ = -1;
  int stop_pipe_[2] = {-1, -1};
  std::mutex mu_;
  std::condition_variable ended_cv_;
  std::map<int, std::int64_t> ended_;
  std::map<int, std::string> hosts_;
  std::map<int, StopSpan> stops_;  // each rank's last time stopped
  std::thread thread_;
};

// Rank side: connects to the parent's socket named in the environment, once; the connection
// stays open for the life of the process.
void connect_rank_watch(int rank) noexcept;

}  // namespace cb
