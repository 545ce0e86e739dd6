// The env:// rendezvous (torchrun, Kubernetes): rank 0 listens on MASTER_PORT; every other rank
// connects to MASTER_ADDR:MASTER_PORT, retrying until the timeout, and says who it is and which
// plan it runs (plan_fingerprint.hpp). Rank 0 checks that the ranks agree (the same WORLD_SIZE,
// one process per RANK, the same plan) and answers with every rank's host, or with the one line
// that says what is wrong, which every rank then prints.
//
// The connections form a star through rank 0. It serves allgathers, enough to bootstrap the
// run's control channel (a Gloo full mesh, whose addresses are the local ends of these
// connections: each rank is reached where it reached rank 0). Then watch() hands it to a thread
// that, for the rest of the run, notices a peer that ends without saying goodbye (its connection
// closes, or its host stops answering TCP keepalives) and names it (peer_loss.hpp).
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/control.hpp"
#include "core/process_start.hpp"
#include "launch/plan_fingerprint.hpp"

namespace cb {

class EnvRendezvous : public Control {
 public:
  // Meets the other ranks within `timeout_seconds`, each running `plan`. Throws a usage Error
  // (exit 2) when the ranks' variables or plans disagree or MASTER_ADDR does not resolve, a
  // runtime Error (exit 1) when the port is taken or ranks do not come in time.
  EnvRendezvous(const LaunchInfo& launch, double timeout_seconds, PlanFingerprint plan = {});
  ~EnvRendezvous() override;  // says goodbye: peers do not take this end for a death
  EnvRendezvous(const EnvRendezvous&) = delete;
  EnvRendezvous& operator=(const EnvRendezvous&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void barrier() override;
  void max(double* values, std::size_t n) override;
  void sum(std::uint64_t* values, std::size_t n) override;
  std::vector<std::string> allgather(const std::string& mine) override;
  // Not offered (the star would route every pair through rank 0): an internal error.
  void send(int peer, const void* data, std::size_t bytes, int count) override;
  void recv(int peer, void* data, std::size_t bytes, int count) override;

  // This rank's IPv4 address as the other ranks reach it.
  const std::string& address() const { return address_; }
  // Every rank's host name, by rank.
  const std::vector<std::string>& hosts() const { return hosts_; }
  // From now on the connections only watch for peers that end (no more allgathers), and this
  // rank's own end by its watchdog or a signal (rank_status.hpp) is told to its peers.
  void watch();
  // Async-signal-safe: tells the peers how this rank ends ("exit", 4 / "signal", 15).
  void say_farewell(const char* how, int code) noexcept;

 private:
  void serve(int port, double seconds);  // rank 0
  void join(const LaunchInfo& launch, double seconds);
  void watch_loop();
  std::string who(int rank) const;  // "rank 3", or "rank 3 on host h2" when hosts differ

  int rank_ = 0;
  int size_ = 1;
  double timeout_ = 300;
  PlanFingerprint plan_;
  std::string address_ = "127.0.0.1";
  std::vector<std::string> hosts_;
  std::vector<int> fds_;  // rank 0: by rank (its own -1); others: [0] is the link to rank 0
  int stop_pipe_[2] = {-1, -1};
  std::thread watcher_;
};

// A process whose env:// variables are wrong (`launch.env_problem`) tells rank 0 before it exits
// with `code`, trying for a few seconds at most, so that rank 0 and every other rank end at once
// naming it rather than waiting for it until the timeout; with RANK missing too. Rank 0 itself
// (RANK=0) instead answers the ranks that reach it in those seconds with its own line. Needs
// MASTER_ADDR and a valid MASTER_PORT; does nothing without them, or once this process has met
// or told rank 0.
void tell_rendezvous_of_problem(const LaunchInfo& launch, double timeout_seconds, int code = 2);

// The same for a process of an env:// launch that fails before it met rank 0 for another
// reason (its command line refused, a backend missing on its host): `line` is what it prints.
// Nothing for other launches.
void tell_rendezvous_of_failure(int code, const std::string& line);

// How long the rendezvous waits under --timeout: a little less, so that its own line, which
// names the missing ranks, comes before the run's watchdog would fire on the same clock.
double rendezvous_seconds(double timeout_seconds);

}  // namespace cb
