#include "launch/start.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "collectives/backends/registry.hpp"
#include "common/error.hpp"
#include "launch/env_rendezvous.hpp"
#include "launch/local_launcher.hpp"
#include "launch/mpi_relaunch.hpp"

namespace cb {

int visible_gpu_count() {
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) {
    // Entries up to the first invalid one count, as the CUDA runtime reads them.
    int n = 0;
    std::string s(v);
    std::size_t start = 0;
    while (start <= s.size()) {
      std::size_t comma = s.find(',', start);
      std::string item =
          s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (item.empty() || item[0] == '-') break;
      ++n;
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    return n;
  }
  std::error_code ec;
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec)) {
    (void)e;
    ++n;
  }
  return n;
}

int default_local_ranks() {
  int gpus = visible_gpu_count();
  return gpus > 0 ? gpus : 2;
}

bool needs_mpi_launcher(const std::vector<std::string>& backends) {
  if (!local_control_backend()) return true;
  for (const auto& b : backends) {
    const BackendEntry* e = find_backend(b);
    if (e && e->needs_mpi_launcher) return true;
  }
  return false;
}

int start_ranks(const std::vector<std::string>& backends, int nranks,
                const std::string& progress_mode) {
  const auto progress = ProgressDisplay::style_for(progress_mode, STDERR_FILENO);
  if (needs_mpi_launcher(backends)) return relaunch_under_mpi(nranks, progress);
  LocalLaunchOptions o;
  o.nranks = nranks;
  o.progress = progress;
  o.args = own_command_line();
  return run_local_ranks(o);
}

namespace {

// Under env://: the Gloo mesh for the run, and the rendezvous star beside it, which outlives it
// and watches for peers that end (members end in reverse order: the mesh first).
class EnvControl : public Control {
 public:
  EnvControl(std::unique_ptr<EnvRendezvous> star, std::unique_ptr<Control> mesh)
      : star_(std::move(star)), mesh_(std::move(mesh)) {}
  int rank() const override { return mesh_->rank(); }
  int size() const override { return mesh_->size(); }
  void barrier() override { mesh_->barrier(); }
  void quiet_barrier() override { mesh_->quiet_barrier(); }
  void max(double* v, std::size_t n) override { mesh_->max(v, n); }
  void sum(std::uint64_t* v, std::size_t n) override { mesh_->sum(v, n); }
  std::vector<std::string> allgather(const std::string& mine) override {
    return mesh_->allgather(mine);
  }
  void send(int peer, const void* d, std::size_t b, int c) override { mesh_->send(peer, d, b, c); }
  void recv(int peer, void* d, std::size_t b, int c) override { mesh_->recv(peer, d, b, c); }

 private:
  std::unique_ptr<EnvRendezvous> star_;
  std::unique_ptr<Control> mesh_;
};

std::unique_ptr<Control> make_env_control(const LaunchInfo& launch, double timeout_seconds,
                                          const PlanFingerprint& plan) {
  const BackendEntry* e = local_control_backend();
  if (!e || !e->rendezvous_control)
    runtime_error("started by an env:// launcher, but this build has no Gloo for its control channel");
  auto star = std::make_unique<EnvRendezvous>(launch, timeout_seconds, plan);
  auto mesh = e->rendezvous_control(*star, star->address(), timeout_seconds);
  star->watch();
  return std::make_unique<EnvControl>(std::move(star), std::move(mesh));
}

}  // namespace

void check_launch(const LaunchInfo& launch, double timeout_seconds) {
  if (launch.env_problem.empty()) return;
  tell_rendezvous_of_problem(launch, timeout_seconds);
  usage_error("{}", launch.env_problem);
}

std::unique_ptr<Control> make_run_control(const LaunchInfo& launch, double timeout_seconds,
                                          const PlanFingerprint& plan) {
  check_launch(launch, timeout_seconds);
  if (launch.kind == LaunchInfo::Kind::Env) return make_env_control(launch, timeout_seconds, plan);
  if (launch.kind == LaunchInfo::Kind::Local) {
    const BackendEntry* e = local_control_backend();
    if (!e)
      runtime_error("started by the local launcher, but this build has no local control channel");
    return e->local_control(launch, timeout_seconds);
  }
  const BackendEntry* e = launcher_control_backend();
  if (!e) runtime_error("started by an MPI launcher, but this build has no control channel for it");
  return e->launcher_control();
}

}  // namespace cb
