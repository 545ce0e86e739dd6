#include "collectives/engine/runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <thread>

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "collectives/engine/call_validation.hpp"
#include "collectives/engine/fault_injection.hpp"
#include "collectives/engine/outlier_cause.hpp"
#include "collectives/engine/straggler.hpp"
#include "common/error.hpp"
#include "common/units.hpp"

namespace cb {

namespace {

// Per-iteration time below which the clock read after each iteration (about 10 ns) would be
// more than 0.05 % of time_us.
constexpr double kStampsShowBelowUs = 20.0;

// The test-only clock skew of this process, and its clock's identity (a skewed clock is its own,
// so that lateness estimates it).
double skew_of(int rank) {
  return rank == test_fault().skew_rank ? test_fault().skew_us : 0.0;
}
std::string clock_identity_of(int rank) {
  return rank == test_fault().skew_rank ? clock_identity() + " skewed" : clock_identity();
}

}  // namespace

Runner::Runner(Backend& backend, Control& control, Watchdog& watchdog, RunnerOptions options,
               const std::vector<Case>& cases)
    : backend_(backend),
      control_(control),
      watchdog_(watchdog),
      options_(options),
      memory_(backend.memory()),
      needs_(buffer_needs(cases, backend.size())),
      places_(gather_places(this_place(backend), control)),
      clocks_(control, control.allgather(clock_identity_of(control.rank())),
              skew_of(control.rank())) {
  send_ = memory_.allocate(needs_.send);
  recv_ = memory_.allocate(needs_.recv);
  diagnostics_ = TimingDiagnostics::from_environment();
}

Runner::~Runner() {
  if (send_) memory_.release(send_);
  if (recv_) memory_.release(recv_);
}

CollectiveCall Runner::call_for(const Case& c) const {
  if (c.split) {
    CollectiveCall call{c.collective, c.dtype, c.op, c.placement, 0, c.traffic.largest(),
                        send_,        recv_,   0};
    call.blocks = blocks_.get();
    return call;
  }
  return {c.collective, c.dtype, c.op, c.placement, std::max(c.root, 0), c.count, send_, recv_};
}

namespace {

bool same_matrix(const Case& a, const Case& b) {
  return a.split == b.split && a.split_elements == b.split_elements &&
         a.uniform_twin == b.uniform_twin && a.dtype == b.dtype && a.placement == b.placement;
}

}  // namespace

CollectiveCall Runner::prepare(Communicator& comm, const Case& c) {
  if (!c.split || (blocks_for_ && same_matrix(*blocks_for_, c))) return call_for(c);
  const Traffic t = case_traffic(c, backend_.size());
  // Ranks on hosts whose maths libraries round differently could draw different routings: a
  // mismatch would hang or corrupt the call, so it stops the run here, named.
  const std::string mine = fmt::format("{:016x}", traffic_checksum(t));
  const std::vector<std::string> all = control_.allgather(mine);
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (all[r] != all.front()) {
      runtime_error(
          "{}: rank {} computed a different traffic matrix than rank 0 (checksum {} "
          "against {}); its host's maths library differs",
          describe(c), r, all[r], all.front());
    }
  }
  auto blocks = std::make_unique<VBlocks>();
  blocks->id = next_vblocks_id();
  blocks->symmetric = c.traffic.symmetric;
  for (int l = 0; l < comm.local_ranks(); ++l) {
    blocks->local.push_back(rank_blocks(t, comm.rank() + l));
  }
  blocks_ = std::move(blocks);
  blocks_for_ = c;
  return call_for(c);
}

namespace {

// Bytes this process has page-faulted in so far (minor faults: memory mapped and first touched,
// no I/O), read around the timed calls only, never inside them.
double faulted_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  static const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  return static_cast<double>(u.ru_minflt) * page;
}

// Times this thread has been switched out involuntarily so far (another thread or process took
// its core), read around the timed calls only.
long preemptions() {
  rusage u{};
  getrusage(RUSAGE_THREAD, &u);
  return u.ru_nivcsw;
}

// The cases this process has begun to measure, for the test-only fault that lets a rank die
// after its first N cases whatever order they run in.
std::uint64_t cases_begun = 0;
// Calls issued in the current case's warm-up and timed batches, for the test-only fault that maps
// memory in a case's first N calls only.
std::uint64_t case_calls = 0;

// Calls this rank issued, for the test-only stall fault's rhythm (every EVERY-th call).
std::uint64_t calls_issued = 0;

// The test-only stall fault's sleep after this call: US on every EVERY-th call of rank R.
int stall_fault_us(int rank) {
  const TestFault& f = test_fault();
  if (rank != f.stall_rank || f.stall_every == 0) return 0;
  return ++calls_issued % f.stall_every == 0 ? f.stall_us : 0;
}

// Whether the test-only slow fault applies to this rank's call (all calls, or one collective's
// from a size on).
bool slowed(int rank, const CollectiveCall& call) {
  const TestFault& f = test_fault();
  if (std::find(f.slow_ranks.begin(), f.slow_ranks.end(), rank) == f.slow_ranks.end()) return false;
  if (f.slow_collective.empty()) return true;
  return name(call.collective) == f.slow_collective &&
         call.count * info(call.dtype).size >= f.slow_min_bytes;
}

// The test-only link fault's sleep after each timed alltoallv call: what this rank receives at
// the fault's rate.
int link_fault_us(const CollectiveCall& call) {
  const double rate = test_fault().link_us_per_mib;
  if (rate <= 0 || !call.blocks) return 0;
  const double bytes = static_cast<double>(call.blocks->local.front().recv_total) *
                       static_cast<double>(info(call.dtype).size);
  return static_cast<int>(bytes / (1 << 20) * rate);
}

// What the test-only faults add after each timed call (after its exit stamp, before the next
// call's entry stamp: work between calls, as a data loader's): a sleep, and memory mapped
// afresh, written and unmapped, as an allocator that maps a library's temporary buffers on
// every call (or, with a count, on a case's first calls only, as one that grows its pools at
// first).
void after_call_fault(int slow_us, std::size_t map_bytes, std::uint64_t map_calls) {
  if (slow_us) std::this_thread::sleep_for(std::chrono::microseconds(slow_us));
  if (map_bytes && (map_calls == 0 || ++case_calls <= map_calls)) {
    void* p = mmap(nullptr, map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    std::memset(p, 1, map_bytes);
    munmap(p, map_bytes);
  }
}

}  // namespace

// Between batches only the watchdog's deadline moves: its thread sleeps through the batch, and
// commbench runs no other thread of its own in a rank, so nothing of ours shares the rank's core.
// The page faults of the batch are read just outside its timed stretch (batch_fault_bytes_).
double Runner::run_batch(Communicator& comm, const CollectiveCall& call, std::uint64_t n,
                         IterationTimer* timer, std::vector<double>* samples, bool stamp,
                         std::vector<CallStamps>* stamps) {
  watchdog_.rearm();
  if (comm.rank() == test_fault().die_rank && cases_begun > test_fault().die_after_cases) {
    std::raise(SIGKILL);
  }
  if (comm.rank() == test_fault().hang_rank) {
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));  // never enters the call
  }
  const int slow_us = (slowed(comm.rank(), call) ? test_fault().slow_us : 0) + link_fault_us(call);
  const std::size_t map_bytes =
      comm.rank() == test_fault().faults_rank ? test_fault().faults_bytes : 0;
  const bool stalls = comm.rank() == test_fault().stall_rank;
  const bool faulty = slow_us || map_bytes || stalls;
  // faults:R:BYTES:N maps memory in the first N calls of each case only.
  const std::uint64_t fault_calls = test_fault().faults_calls;
  std::unique_ptr<IterationTimer> own;
  if (!timer) {
    own = comm.make_timer();
    timer = own.get();
  }
  timer->reserve(n);
  if (diagnostics_) diagnostics_->audit().before_batch();
  const double faulted_before = faulted_bytes();
  const long preempted_before = preemptions();
  timer->start();
  // Two loops, so that the one timed whole has nothing in it but the call and the progress. In
  // the stamped one, the stamp after a call is its exit and the next call's entry, unless
  // something runs in between (a fault) or the timer's calls may start later than issued.
  const bool enter = faulty || timer->needs_entries();
  if (stamp) {
    for (std::uint64_t i = 0; i < n; ++i) {
      if (enter) timer->enter();
      comm.issue(call);
      timer->mark();
      if (faulty) after_call_fault(slow_us + stall_fault_us(comm.rank()), map_bytes, fault_calls);
      watchdog_.progress(++progress_);
    }
  } else {
    for (std::uint64_t i = 0; i < n; ++i) {
      comm.issue(call);
      if (faulty) after_call_fault(slow_us + stall_fault_us(comm.rank()), map_bytes, fault_calls);
      watchdog_.progress(++progress_);
    }
  }
  comm.complete();
  timer->stop();
  batch_fault_bytes_ = faulted_bytes() - faulted_before;
  batch_preemptions_ = static_cast<double>(preemptions() - preempted_before);
  if (diagnostics_) diagnostics_->audit().after_batch();
  if (samples) {
    auto s = timer->samples_us();
    samples->insert(samples->end(), s.begin(), s.end());
  }
  if (stamp && stamps) stamps->push_back(timer->call_stamps());
  return timer->elapsed_us();
}

LatenessCase Runner::judge_lateness(Communicator& comm, const Case& c,
                                    const std::vector<CallStamps>& batches, const ClockLine& line) {
  LatenessCase out;
  const WaitPattern pattern = wait_pattern(c.collective);
  if (control_.size() < 2 || pattern == WaitPattern::None) return out;
  // Every process judges as many calls: a batch without stamps of its own counts for none.
  std::vector<CallStamps> usable = batches;
  double stamp_error = 0;
  for (const auto& b : batches) stamp_error = std::max(stamp_error, b.error_us);
  std::vector<double> lacking;
  for (const auto& b : usable) lacking.push_back(b.entry.empty() ? 1.0 : 0.0);
  control_.max(lacking.data(), lacking.size());  // 1 where any process lacks the batch's stamps
  for (std::size_t i = 0; i < usable.size(); ++i)
    if (lacking[i] > 0) usable[i] = CallStamps{};
  const Arrivals mine = judged_calls(usable, line, clocks_.skew_us());
  const bool root_here = c.root >= comm.rank() && c.root < comm.rank() + comm.local_ranks();
  out.ranks = measure_lateness(control_, comm.rank(), mine, pattern, root_here,
                               line.error_us() + stamp_error);
  out.places = places_;
  return out;
}

WarmupOutcome Runner::warm_up(Communicator& comm, const CollectiveCall& call,
                              double* per_iter_us, double* typical_us) {
  auto timer = comm.make_timer();
  std::vector<double> samples;
  // One batch: its mean per iteration (to size the timed batches), its median iteration (what an
  // iteration takes, whatever a slow first call cost) and the memory it faulted in per iteration,
  // each the most of any rank.
  auto measure = [&](std::uint64_t n) {
    samples.clear();
    const double total = run_batch(comm, call, n, timer.get(), &samples);
    double agreed[3] = {total, summarize(samples).p50,
                        batch_fault_bytes_ / static_cast<double>(n)};
    control_.max(agreed, 3);
    *per_iter_us = agreed[0] / static_cast<double>(n);
    *typical_us = agreed[1];
    return WarmupBatch{n, agreed[0], agreed[1], agreed[2]};
  };
  *per_iter_us = *typical_us = 0;
  if (options_.warmup) {
    if (*options_.warmup) measure(*options_.warmup);
    return {WarmupEnd::Bound, *options_.warmup};
  }
  const double budget_us = options_.budget_s * 1e6;
  WarmupRule rule({.min_us = budget_us * 0.2,
                   .min_iters = options_.max_warmup,
                   .max_us = kWarmupBoundBudgets * budget_us,
                   .max_iters = std::max(options_.warmup_bound_iters, options_.max_warmup)});
  for (std::uint64_t n = rule.first(); n; n = rule.next(measure(n))) {
  }
  return {rule.end(), rule.done()};
}

std::optional<std::uint64_t> Runner::validate(Communicator& comm, const CollectiveCall& call,
                                              std::uint64_t seed) {
  return validate_call(memory_, control_, comm, call, seed, [&] {
    watchdog_.progress(++progress_);
    comm.issue(call);
    comm.complete();
    watchdog_.progress(++progress_);
  });
}

Measurement Runner::run(Communicator& comm, const Case& c, std::uint64_t case_index) {
  ++cases_begun;
  case_calls = 0;
  watchdog_.arm(describe(c));
  CollectiveCall call = prepare(comm, c);
  {
    // Timing data: the pattern for seed 0 (its values do not matter, only that they are finite).
    Pattern pattern(c.dtype, c.op == ReduceOp::None ? ReduceOp::Max : c.op, backend_.size(), 0);
    for (int l = 0; l < comm.local_ranks(); ++l) {
      fill_call_input(memory_, comm.local_call(call, l), pattern, comm.rank() + l, backend_.size());
    }
  }
  control_.barrier();

  double per_iter_us = 0, typical_us = 0;
  const WarmupOutcome warmup = warm_up(comm, call, &per_iter_us, &typical_us);

  Measurement m;
  std::vector<double> samples;
  double elapsed = 0;  // this rank's microseconds behind time_us
  double spent = 0;    // this rank's timed microseconds in all, for the budget
  std::uint64_t whole_batches = 0;
  auto timer = comm.make_timer();
  // Where a clock read after every iteration would show in time_us, each batch timed whole
  // for time_us is followed by one as long with a time stamp per iteration for the samples.
  const bool apart =
      timer->times_batches_alone() &&
      (timer->marks_always_show() || (typical_us > 0 && typical_us < kStampsShowBelowUs));
  // Each timed step's samples and the memory this rank faulted in during its timed batches; the
  // stamped batches' calls, for lateness (the clocks are measured before and after them).
  std::vector<BatchFaults> batch_faults;
  std::vector<CallStamps> stamps;
  auto timed = [&](std::uint64_t n) {
    const std::size_t first = samples.size();
    const double t =
        run_batch(comm, call, n, timer.get(), apart ? nullptr : &samples, !apart, &stamps);
    double faulted = batch_fault_bytes_;
    double preempted = batch_preemptions_;
    elapsed += t;
    spent += t;
    if (apart) {
      ++whole_batches;
      spent += run_batch(comm, call, n, timer.get(), &samples, true, &stamps);
      faulted += batch_fault_bytes_;
      preempted += batch_preemptions_;
    }
    batch_faults.push_back({first, samples.size(), faulted, preempted});
  };
  ClockLine clock_line;
  clock_line.before_at_us = clocks_.now_us();
  clock_line.before = clocks_.measure();
  control_.barrier();
  if (options_.iters) {
    m.iters = *options_.iters;
    timed(m.iters);
  } else {
    const double budget_us = options_.budget_s * 1e6;
    auto clamp_batch = [&](double want) {
      double room = static_cast<double>(options_.max_iters - m.iters);
      return static_cast<std::uint64_t>(std::clamp(want, 1.0, std::max(room, 1.0)));
    };
    std::uint64_t next =
        clamp_batch(std::max(static_cast<double>(options_.min_iters),
                             per_iter_us > 0 ? budget_us * 0.25 / per_iter_us : 1.0));
    for (;;) {
      timed(next);
      m.iters += next;
      double agreed[2] = {spent, relative_standard_error(samples)};
      control_.max(agreed, 2);
      if (m.iters >= options_.max_iters) break;
      bool enough = m.iters >= options_.min_iters;
      if (enough && (agreed[1] <= options_.target_rse || agreed[0] >= budget_us)) break;
      double mean = agreed[0] / static_cast<double>(m.iters);
      double by_budget = mean > 0 ? (budget_us - agreed[0]) / mean : 1.0;
      double want = std::min(static_cast<double>(m.iters), by_budget);
      if (!enough) want = std::max(want, static_cast<double>(options_.min_iters - m.iters));
      next = clamp_batch(want);
    }
  }
  clock_line.after_at_us = clocks_.now_us();
  clock_line.after = clocks_.measure();
  const double issued = static_cast<double>(m.iters) * (apart ? 2 : 1);
  double faulted = 0;
  for (const BatchFaults& b : batch_faults) faulted += b.fault_bytes;
  faulted = issued > 0 ? faulted / issued : 0.0;
  control_.max(&faulted, 1);
  // Every rank's mean (time_us is the slowest's), and per-iteration samples as the max over
  // ranks.
  // With a graph of several calls per timed issue (NCCL's --cuda-graph), figures are per call.
  const std::uint64_t calls = comm.calls_per_timed_issue();
  if (calls > 1) {
    for (double& s : samples) s /= static_cast<double>(calls);
    m.iters *= calls;
    faulted /= static_cast<double>(calls);
  }
  m.fault_bytes = faulted;
  const double mine_us = m.iters ? elapsed / static_cast<double>(m.iters) : 0.0;
  const std::vector<double> per_rank = gather_times(mine_us, control_);
  control_.max(samples.data(), samples.size());
  if (diagnostics_) {
    diagnostics_->write_case(comm.rank(), backend_.name(), describe(c), c.bytes, samples,
                             whole_batches, warmup);
  }
  m.lateness = judge_lateness(comm, c, stamps, clock_line);
  m.rank_time = rank_times(per_rank, places_);
  m.time_us = m.rank_time.max_us;
  {
    // A batch faulted where any rank faulted during it (every rank ran the same batches).
    // So was it preempted where any rank was switched out during it.
    const std::size_t n = batch_faults.size();
    std::vector<double> any(2 * n);
    for (std::size_t i = 0; i < n; ++i) {
      any[i] = batch_faults[i].fault_bytes;
      any[n + i] = batch_faults[i].preemptions;
    }
    control_.max(any.data(), any.size());
    for (std::size_t i = 0; i < n; ++i) {
      batch_faults[i].fault_bytes = any[i];
      batch_faults[i].preemptions = any[n + i];
    }
    m.outlier_cause = outlier_cause(samples, batch_faults);
  }
  m.stats = summarize(std::move(samples));

  if (options_.check && c.collective != Collective::Barrier) {
    m.wrong = validate(comm, call, case_index * 1009 + m.iters + 1);
  }
  watchdog_.disarm();
  return m;
}

ResultRecord make_record(const Backend& backend, const Case& c, const Measurement& m, int nnodes) {
  ResultRecord r;
  const bool barrier = c.collective == Collective::Barrier;
  r.backend = backend.name();
  r.library = backend.library();
  r.algorithm = c.algorithm;
  r.collective = std::string(name(c.collective));
  r.dtype = barrier ? "none" : std::string(info(c.dtype).name);
  r.op = std::string(name(c.op));
  r.placement = barrier ? "none" : std::string(name(c.placement));
  r.root = c.root;
  r.nranks = backend.size();
  r.nnodes = nnodes;
  r.bytes = c.bytes;
  r.count = c.count;
  r.iters = m.iters;
  r.time_us = m.time_us;
  r.min_us = m.stats.min;
  r.p50_us = m.stats.p50;
  r.p99_us = m.stats.p99;
  r.max_us = m.stats.max;
  r.cv = m.stats.cv;
  if (m.iters > 0) {
    r.p50_low_us = m.stats.p50_low;
    r.p50_high_us = m.stats.p50_high;
  }
  // alltoallv: nccl-tests' convention, the bytes of the rank that sends or receives the most.
  const double moved = c.split ? static_cast<double>(c.traffic.largest() * info(c.dtype).size)
                               : static_cast<double>(c.bytes);
  if (!barrier && m.time_us > 0) {
    double algbw = moved / m.time_us / 1e3;  // bytes/us = MB/s
    r.algbw_GBps = algbw;
    r.busbw_GBps = algbw * bus_factor(c.collective, backend.size());
  }
  if (c.split) {
    r.split = split_name(*c.split);
    r.incast = c.traffic.incast;
    r.send_skew = c.traffic.send_skew;
    r.drop_share = c.traffic.drop_share;
  }
  r.wrong = m.wrong;
  r.rank_time = m.rank_time;
  r.lateness = case_lateness(m.lateness);
  r.fault_bytes = m.fault_bytes;
  if (shows_slow_calls(r)) r.outlier_cause = m.outlier_cause;
  return r;
}

std::string describe(const Case& c) {
  if (c.collective == Collective::Barrier) return "barrier";
  std::string s =
      fmt::format("{} {} {}", name(c.collective), format_size(c.bytes), info(c.dtype).name);
  if (c.op != ReduceOp::None) s += fmt::format(" {}", name(c.op));
  if (c.split) s += fmt::format(" {}", split_name(*c.split));
  if (c.uniform_twin) s += " (its uniform twin)";
  if (c.root >= 0) s += fmt::format(" root {}", c.root);
  if (c.placement == Placement::In) s += " in-place";
  if (c.algorithm != "default") s += fmt::format(" ({})", c.algorithm);
  return s;
}

}  // namespace cb
