#include "app/rank_run.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "collectives/backends/registry.hpp"
#include "collectives/engine/case_budget.hpp"
#include "collectives/engine/run_meta.hpp"
#include "collectives/engine/session.hpp"
#include "common/error.hpp"
#include "common/host_name.hpp"
#include "common/output_path.hpp"
#include "common/temp_files.hpp"
#include "common/version_info.hpp"
#include "core/watchdog.hpp"
#include "launch/peer_loss.hpp"
#include "launch/progress.hpp"
#include "launch/rank_status.hpp"
#include "launch/start.hpp"
#include "probes/topology.hpp"
#include "report/format/writer.hpp"

namespace cb {

namespace {

// Why the commbench that started the ranks chose the default backends.
constexpr const char* kBackendChoiceEnv = "COMMBENCH_BACKEND_CHOICE";

// A rank's run, once its backends are chosen.
struct RankRun {
  const RunPlan& plan;
  const ExtraWriter& extra;
  const RankWork& work;  // where given, instead of the sweep
  const PlanFingerprint& head;  // the subcommand and its own options
  SweepOptions sweep;    // the plan's, with the chosen backends' defaults
  BackendOptions bo;
  std::vector<std::string> backends;
  std::string backend_choice;  // why these backends, when -B was not given
};

BackendOptions backend_options(const RunPlan& plan) {
  const auto& algorithms = plan.sweep.algorithms;
  const bool report_choice = std::any_of(algorithms.begin(), algorithms.end(), [](const auto& a) {
    return a == "default" || a == "all";
  });
  return {.launch = detect_launch(),
          .memory = plan.memory,
          .memory_explicit = plan.memory_given,
          .dtypes = plan.sweep.dtypes,
          .ops = plan.sweep.ops,
          .report_choice = report_choice,
          .gpus_per_process = plan.gpus,
          .flags = plan.backend_flags};
}

// Rank 0's writers: stdout in --format (unless the caller shows its own view), each --output,
// and the caller's extra one.
std::vector<std::unique_ptr<Writer>> rank0_writers(const RankRun& run) {
  std::vector<std::unique_ptr<Writer>> writers;
  if (run.plan.results_to_stdout) writers.push_back(make_stdout_writer(run.plan.format));
  for (const auto& path : run.plan.outputs) writers.push_back(make_file_writer(path));
  if (run.extra) writers.push_back(run.extra());
  return writers;
}

// No launcher: start the ranks (locally, or under the MPI launcher) and report their outcome.
int start_run_ranks(const RankRun& run, int ranks) {
  for (const auto& name : run.backends) {
    if (std::string why = find_backend(name)->unavailable_reason(run.bo); !why.empty()) {
      runtime_error("backend {} cannot run here: {}", name, why);
    }
  }
  // The ranks choose the same backends, but only this process knows why (it asked the MPI
  // before deciding whether ranks start under it): they record this reason, not their own.
  if (!run.backend_choice.empty()) ::setenv(kBackendChoiceEnv, run.backend_choice.c_str(), 1);
  // Rank 0 names its temporary output files after this process, so that they can be removed
  // here whatever ends the ranks (a kill, a crash, an interrupt).
  ::setenv(kTempTagEnv, std::to_string(::getpid()).c_str(), 0);
  for (const auto& path : run.plan.outputs) track_temp_file(output_target(path) + temp_suffix());
  try {
    int code = start_ranks(run.backends, ranks, run.plan.progress);
    if (code != 0) remove_temp_files();
    return code;
  } catch (...) {
    remove_temp_files();
    throw;
  }
}

// The session over `plans`, its records to rank 0's writers, progress on stderr.
void run_session(RankRun& run, Control& control, Watchdog& watchdog,
                 std::vector<std::unique_ptr<Backend>>& backends,
                 const std::vector<std::vector<Case>>& plans, const RunMeta& meta,
                 std::optional<Session>& session) {
  const int rank = control.rank();
  std::vector<std::unique_ptr<Writer>> writers;
  if (rank == 0) writers = rank0_writers(run);
  for (auto& w : writers) w->begin(meta);
  Progress progress(run.plan.progress, rank == 0, planned_seconds(plans, run.plan.runner));
  session.emplace(backends, plans, control, watchdog, run.plan.runner, [&](const ResultRecord& r) {
    for (auto& w : writers) w->add(r);
  });
  session->run(meta.nnodes, {[&](std::size_t done, std::size_t total, const std::string& label) {
                               progress.update(done, total, label);
                             },
                             [&] { progress.clear(); }});
  progress.finish();
  RunMeta measured = meta;
  measured.launches = {session->launch_control()};
  measured.straggler = session->straggler();
  for (auto& w : writers) w->update_meta(measured);
  for (auto& w : writers) w->finish();
  session->check_results();
  session->warn_if_control_moved();
  session->warn_if_straggler();
}

// What every env:// rank must agree on: the plan as this rank runs it (its backends chosen, -e's
// default for them, the memory they take).
PlanFingerprint fingerprint_as_run(const RankRun& run) {
  RunPlan as_run = run.plan;
  as_run.sweep = run.sweep;
  as_run.backends = run.backends;
  as_run.memory = run.bo.memory;
  return run_fingerprint(as_run, run.head);
}

// This rank's part of the run, from the watchdog on.
int run_this_rank(RankRun& run) {
  BackendOptions& bo = run.bo;
  // A peer that died leaves its sockets closed: a write to one must fail (EPIPE), so that the
  // backend's error names that peer, instead of SIGPIPE ending this rank without a word.
  ::signal(SIGPIPE, SIG_IGN);
  // A parent that gathers the ranks' ends prints the timeout from their status (naming a rank
  // it saw stopped); without one rank 0 prints it, and under env:// each rank its own.
  const bool parent = rank_status_wanted();
  const bool env = bo.launch.kind == LaunchInfo::Kind::Env;
  const bool speaker = bo.launch.rank == 0 || env;
  // Under env:// a watcher names a peer that ended (peer_loss.hpp), one whose watchdog fired
  // too: the hook prints this rank's line once it has taken the report from the watcher, so
  // that one line is printed, not both.
  Watchdog watchdog(run.plan.timeout, speaker && !parent && !env);
  watchdog.name_rank(fmt::format("rank {}, host {}", bo.launch.rank, host_name()));
  bo.watchdog = &watchdog;
  // A timeout or an interrupt leaves no half-written output behind.
  watchdog.on_fire([&watchdog, speaker, env] {
    remove_temp_files();
    if (env) {
      const std::string peer = failure_cause(std::chrono::milliseconds(0));
      const std::string line = "commbench: " + (peer.empty() ? watchdog.fired_line() : peer) + "\n";
      [[maybe_unused]] ssize_t w = ::write(STDERR_FILENO, line.data(), line.size());
    }
    // Rank 0's line first: the others only waited with it, unless rank 0 cannot speak.
    if (!speaker) std::this_thread::sleep_for(std::chrono::milliseconds(500));
    record_rank_exit(4, watchdog.fired_line());
  });
  end_rank_cleanly_on_signals();
  watchdog.arm("start-up (control channel rendezvous)");
  std::unique_ptr<Control> control =
      make_run_control(bo.launch, run.plan.timeout, fingerprint_as_run(run));
  // A rank records how it failed before unwinding closes its connections (the control channel,
  // the backends, their communicators and the session live outside the try): its peers then
  // fail too, and the parent must see which failure came first.
  std::vector<std::unique_ptr<Backend>> backends;
  std::vector<std::vector<Case>> plans;
  std::optional<Session> session;
  std::vector<std::shared_ptr<void>> keep;
  try {
    bo.control = control.get();
    bo.timeout_seconds = run.plan.timeout;
    create_backends(run.backends, bo, watchdog, backends);
    auto meta_for = [&](const RunHosts& hosts) {
      return assemble_run_meta(
          *control, hosts, backends,
          {commbench_version(), commbench_git_commit(), bo.launch, run.backend_choice,
           host_topology_facts("/sys", run.plan.roof).dump(), topology_summary});
    };
    if (run.work) {
      RankContext ctx{run.plan, *control, watchdog, backends, meta_for, keep};
      run.work(ctx);
      return 0;
    }
    share_split_matrices(*control, run.sweep.split);
    plans = plan_backends(backends, run.sweep, control->rank() == 0);
    const RunHosts hosts = gather_hosts(*control);
    check_host_memory(*control, hosts.ranks_here, backends, plans);
    RunMeta meta = meta_for(hosts);
    meta.split = split_meta(run.sweep, plans);
    run_session(run, *control, watchdog, backends, plans, meta, session);
    return 0;
  } catch (const Error& e) {
    if (rank_status_wanted()) record_rank_exit(exit_code(e.kind()), e.what());
    throw;
  }
}

}  // namespace

int run_here(const RunPlan& plan, const ExtraWriter& extra, const RankWork& work,
             const PlanFingerprint& head) {
  RankRun run{plan, extra, work, head, plan.sweep, backend_options(plan), plan.backends, {}};
  if (plan.backends.empty()) {
    BackendChoice choice = default_backends(run.bo.launch, run.bo);
    run.backends = choice.names;
    run.backend_choice = choice.why;
    if (const char* why = std::getenv(kBackendChoiceEnv);
        why && *why && run.bo.launch.kind != LaunchInfo::Kind::Single) {
      run.backend_choice = why;
    }
    if (choice.device_memory && !plan.memory_given) run.bo.memory = MemoryKind::Device;
    check_run_choices(
        {run.backends, run.bo.memory, plan.memory_given, plan.gpus, plan.own_options});
  }
  // A GPU backend's device memory makes -e default to 1 GiB, as --memory device does.
  if (!plan.memory_given && !plan.max_bytes_given && runs_on_gpu(run.backends)) {
    run.sweep.max_bytes = std::max<std::uint64_t>(1ULL << 30, run.sweep.min_bytes);
  }

  const int ranks = wanted_ranks(plan);
  if (run.bo.launch.kind == LaunchInfo::Kind::Single) return start_run_ranks(run, ranks);
  if (plan.nranks && ranks != run.bo.launch.size) {
    usage_error("-N {} conflicts with the {} ranks the launcher started", ranks,
                run.bo.launch.size);
  }
  return run_this_rank(run);
}

}  // namespace cb
