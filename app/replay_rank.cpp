#include "app/replay_rank.hpp"

#include <fmt/format.h>

#include <map>
#include <numeric>
#include <set>

#include "collectives/engine/call_validation.hpp"
#include "collectives/engine/control_measurement.hpp"
#include "collectives/engine/memory_check.hpp"
#include "collectives/engine/session.hpp"
#include "collectives/engine/step_driver.hpp"
#include "collectives/patterns/ddp_buckets.hpp"
#include "collectives/patterns/fsdp_units.hpp"
#include "collectives/patterns/step_figures.hpp"
#include "collectives/step_call.hpp"
#include "common/error.hpp"
#include "common/units.hpp"
#include "core/watchdog.hpp"
#include "launch/progress.hpp"

namespace cb {

std::vector<StepProgram> replay_programs(const ReplayPlan& plan, int nranks,
                                         std::vector<std::optional<double>>* caps) {
  const std::vector<double> backward = backward_times(plan.model, plan.compute);
  std::vector<StepProgram> out;
  if (caps) caps->clear();
  if (plan.pattern == "fsdp") {
    out.push_back(fsdp_program(plan.model, fsdp_units(plan.model.params, nranks), backward,
                               plan.forward_ratio));
    if (caps) caps->push_back(std::nullopt);
    return out;
  }
  const std::uint64_t first = ddp_bucket_bytes(plan.first_mb, "--first-bucket-mb");
  for (double cap : plan.caps_mb) {
    const auto buckets =
        ddp_buckets(plan.model.params, first, ddp_bucket_bytes(cap, "--bucket-cap-mb"));
    out.push_back(ddp_program(plan.model, buckets, backward));
    if (caps) caps->push_back(cap);
  }
  return out;
}

namespace {

std::uint64_t buffer_bytes(const StepProgram& p) {
  return std::accumulate(p.buffers.begin(), p.buffers.end(), std::uint64_t{0});
}

// What stops `backend` from running `programs`, before anything is allocated.
void check_backend(Backend& backend, const std::vector<StepProgram>& programs) {
  std::set<std::pair<Collective, DType>> seen;
  for (const auto& p : programs) {
    for (const auto& op : p.ops) {
      if (!seen.insert({op.collective, op.dtype}).second) continue;
      const char* what = info(op.dtype).name.data();
      if (!backend.supports(op.dtype)) {
        usage_error(
            "backend {} cannot run the model's {} parameters: it has no {} (see "
            "`commbench list dtypes`); cast them with --param-dtype",
            backend.name(), what, what);
      }
      if (!backend.supports(op.collective, ReduceOp::Sum) && info(op.collective).reduces) {
        usage_error("backend {} cannot sum {}", backend.name(), name(op.collective));
      }
      if (std::string why = backend.unsupported(op.dtype, ReduceOp::Sum); !why.empty()) {
        usage_error("backend {} cannot {} the model's {} parameters: {}", backend.name(),
                    name(op.collective), what, why);
      }
    }
  }
}

// Every host's verdict on the largest setting's host buffers (settings run one at a time).
void check_replay_memory(Control& control, int ranks_here,
                         const std::vector<std::unique_ptr<Backend>>& backends,
                         const std::vector<std::vector<StepProgram>>& programs) {
  std::uint64_t worst = 0;
  for (std::size_t b = 0; b < backends.size(); ++b) {
    if (backends[b]->memory().kind() != MemoryKind::Host) continue;
    for (const auto& p : programs[b]) worst = std::max(worst, buffer_bytes(p));
  }
  std::string mine;
  const std::uint64_t available = available_host_memory();
  const std::uint64_t need = worst * static_cast<std::uint64_t>(std::max(ranks_here, 1));
  if (available > 0 && need > available) {
    mine = fmt::format(
        "cannot allocate the replay's buffers: {} rank{} on this host need {} each (every "
        "gradient bucket or FSDP unit at once), {} in all, but {} is available; use fewer ranks "
        "per host or a smaller model",
        ranks_here, ranks_here == 1 ? "" : "s", format_size(worst), format_size(need),
        format_size(available));
  }
  for (const auto& verdict : control.allgather(mine)) {
    if (!verdict.empty()) usage_error("{}", verdict);
  }
}

// The buffers of one setting, released when it ends.
class Buffers {
 public:
  Buffers(Memory& memory, const std::vector<std::uint64_t>& bytes) : memory_(memory) {
    for (auto b : bytes) ptrs_.push_back(memory_.allocate(std::max<std::uint64_t>(b, 1)));
  }
  ~Buffers() {
    for (void* p : ptrs_) memory_.release(p);
  }
  const std::vector<void*>& all() const { return ptrs_; }

 private:
  Memory& memory_;
  std::vector<void*> ptrs_;
};

struct SettingRun {
  Backend& backend;
  Control& control;
  Watchdog& watchdog;
  const ReplayPlan& plan;
  const StepProgram& program;
  std::vector<Communicator*> channels;
  StepDriver& driver;
  bool device;  // the driver is the device's own
  std::uint64_t seed_base;
};

std::uint64_t validate_step(const SettingRun& r, const std::vector<void*>& buffers) {
  std::uint64_t wrong = 0;
  for (std::size_t i = 0; i < r.program.ops.size(); ++i) {
    const StepOp& op = r.program.ops[i];
    Communicator& comm = *r.channels[static_cast<std::size_t>(op.channel)];
    const CollectiveCall call = step_call(op, buffers);
    wrong += validate_call(r.backend.memory(), r.control, comm, call, r.seed_base + i, [&] {
      if (!r.device && comm.nonblocking()) {  // the entry points the step uses
        const Communicator::Ticket t = comm.start(call);
        comm.wait(t);
        comm.test(t);  // collects it
      } else {
        comm.issue(call);
        comm.complete();
      }
    });
  }
  return wrong;
}

// Every figure of a timed step, each the slowest rank's.
StepTimeline slowest_rank(Control& control, const StepTimeline& mine) {
  std::vector<double> v = {mine.step_us, mine.compute_us};
  v.insert(v.end(), mine.start_us.begin(), mine.start_us.end());
  v.insert(v.end(), mine.end_us.begin(), mine.end_us.end());
  control.max(v.data(), v.size());
  StepTimeline t;
  const std::size_t n = mine.start_us.size();
  t.step_us = v[0];
  t.compute_us = v[1];
  t.start_us.assign(v.begin() + 2, v.begin() + 2 + static_cast<std::ptrdiff_t>(n));
  t.end_us.assign(v.begin() + 2 + static_cast<std::ptrdiff_t>(n), v.end());
  return t;
}

ReplayRecord run_setting(const SettingRun& r, const std::string& label) {
  Buffers buffers(r.backend.memory(), r.program.buffers);
  // Finite data in every input (the values do not matter to the timing).
  for (const StepOp& op : r.program.ops) {
    Communicator& comm = *r.channels[static_cast<std::size_t>(op.channel)];
    const CollectiveCall call = step_call(op, buffers.all());
    Pattern pattern(op.dtype, ReduceOp::Sum, comm.size(), 0);
    for (int l = 0; l < comm.local_ranks(); ++l) {
      fill_call_input(r.backend.memory(), comm.local_call(call, l), pattern, comm.rank() + l,
                      comm.size());
    }
  }
  r.watchdog.arm(label);
  for (int w = 0; w < r.plan.warmup; ++w) {
    r.control.barrier();
    r.watchdog.rearm();
    r.driver.run(r.program, r.channels, buffers.all());
  }
  std::vector<StepTimeline> steps;
  for (int s = 0; s < r.plan.steps; ++s) {
    r.control.barrier();
    r.watchdog.rearm();
    steps.push_back(slowest_rank(r.control, r.driver.run(r.program, r.channels, buffers.all())));
  }
  ReplayRecord rec;
  summarize_steps(r.program, steps, rec);
  rec.warmup = r.plan.warmup;
  if (r.plan.check) {
    r.watchdog.rearm();
    rec.wrong = validate_step(r, buffers.all());
  }
  r.watchdog.disarm();
  return rec;
}

}  // namespace

ReplayOutcome run_replay(const ReplayPlan& plan, RankContext& ctx) {
  Control& control = ctx.control;
  auto& backends = ctx.backends;
  std::vector<std::vector<StepProgram>> programs;
  std::vector<std::vector<std::optional<double>>> caps(backends.size());
  for (std::size_t b = 0; b < backends.size(); ++b) {
    programs.push_back(replay_programs(plan, backends[b]->size(), &caps[b]));
    check_backend(*backends[b], programs.back());
  }
  const RunHosts hosts = gather_hosts(control);
  check_replay_memory(control, hosts.ranks_here, backends, programs);
  ReplayOutcome out;
  out.meta = ctx.meta(hosts);

  LaunchControl launch;
  launch.case_order_seed = case_order_seed();
  HostLoad load;
  load.start();
  sample_control_collectively(control, "start", launch);
  std::size_t total = 0, done = 0;
  for (const auto& p : programs) total += p.size();
  Progress progress(ctx.plan.progress, control.rank() == 0, {}, "settings");
  bool middle_taken = false;
  for (std::size_t b = 0; b < backends.size(); ++b) {
    Backend& backend = *backends[b];
    // One communicator per collective the programs use, kept beyond an error's unwinding.
    std::map<Collective, Communicator*> comms;
    for (const auto& p : programs[b]) {
      for (Collective c : p.channels) {
        if (comms.count(c)) continue;
        ctx.watchdog.arm(fmt::format("{} communicator set-up for {}", backend.name(), name(c)));
        Opened o = backend.open(c, "default");
        ctx.watchdog.disarm();
        if (!o.comm)
          usage_error("backend {} cannot run {}: {}", backend.name(), name(c), o.skipped_reason);
        ctx.keep.push_back(o.comm);
        comms[c] = o.comm.get();
      }
    }
    std::unique_ptr<StepDriver> driver = backend.make_step_driver();
    const bool device = driver != nullptr;
    if (!driver) {
      for (const auto& [c, comm] : comms) {
        if (!comm->nonblocking()) {
          usage_error("backend {} has no non-blocking {}: replay cannot overlap it with compute",
                      backend.name(), name(c));
        }
      }
      driver = make_host_step_driver(ctx.watchdog);
    }
    std::map<std::size_t, ReplayRecord> held;
    for (std::size_t k : case_order(programs[b].size(), launch.case_order_seed)) {
      const StepProgram& program = programs[b][k];
      if (!middle_taken && 2 * done >= total) {
        sample_control_collectively(control, "middle", launch);
        middle_taken = true;
      }
      std::vector<Communicator*> channels;
      for (Collective c : program.channels) channels.push_back(comms.at(c));
      for (const StepOp& op : program.ops) {
        Communicator& comm = *channels[static_cast<std::size_t>(op.channel)];
        std::vector<void*> none(program.buffers.size(), nullptr);
        if (std::string why = comm.skip_reason(step_call(op, none)); !why.empty()) {
          usage_error("backend {} cannot run {} of {} ({}): {}", backend.name(), op.label,
                      name(op.collective), format_size(op.bytes), why);
        }
      }
      ReplayRecord rec;
      rec.backend = backend.name();
      rec.bucket_cap_mb = caps[b][k];
      if (plan.pattern == "ddp") rec.first_bucket_mb = plan.first_mb;
      rec.pattern = program.pattern;
      const std::string label = fmt::format("replay {} {}", plan.model.name, rec.setting());
      progress.update(++done, total, label);
      const SettingRun run{backend,  control, ctx.watchdog, plan,          program,
                           channels, *driver, device,       (k + 1) * 1009};
      ReplayRecord measured = run_setting(run, label);
      measured.backend = rec.backend;
      measured.library = backend.library();
      measured.pattern = rec.pattern;
      measured.model = plan.model.name;
      measured.nranks = backend.size();
      measured.nnodes = out.meta.nnodes;
      measured.bucket_cap_mb = rec.bucket_cap_mb;
      measured.first_bucket_mb = rec.first_bucket_mb;
      measured.params = plan.model.numel();
      measured.bytes = plan.model.bytes();
      held.emplace(k, std::move(measured));
    }
    for (auto& [k, rec] : held) out.records.push_back(std::move(rec));
  }
  progress.finish();
  if (!middle_taken) sample_control_collectively(control, "middle", launch);
  sample_control_collectively(control, "end", launch);
  load.finish(launch);
  out.meta.launches = {launch};
  return out;
}

}  // namespace cb
