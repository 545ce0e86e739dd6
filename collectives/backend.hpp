// The interface a backend implements. Adding a backend is one folder that implements these and
// one registration line in registry.cpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collectives/catalogue/catalogue.hpp"
#include "collectives/catalogue/dtype.hpp"
#include "collectives/catalogue/traffic.hpp"
#include "collectives/step_driver.hpp"
#include "collectives/validation/pattern.hpp"
#include "common/error.hpp"
#include "core/control.hpp"
#include "core/timer.hpp"

namespace cb {

enum class MemoryKind { Host, Device };

// Where a backend's buffers live, and how validation data gets in and out of them.
class Memory {
 public:
  virtual ~Memory() = default;
  virtual MemoryKind kind() const = 0;
  // Throws a usage Error naming the size when it cannot be had.
  virtual void* allocate(std::uint64_t bytes) = 0;
  virtual void release(void* p) = 0;
  virtual void fill(void* dst, std::uint64_t count, const PeriodicTable& t,
                    std::uint64_t src_offset) = 0;
  virtual void poison(void* dst, std::uint64_t bytes) = 0;  // overwrite with a marker
  virtual std::uint64_t count_wrong(const void* buf, std::uint64_t count, const PeriodicTable& t,
                                    std::uint64_t src_offset) = 0;
  // Corrupts one element (test-only fault injection, see runner.cpp).
  virtual void corrupt(void* buf, std::uint64_t element_size) = 0;
};

// Ordinary host memory; the default for MPI and Gloo.
std::unique_ptr<Memory> make_host_memory();

// One collective call, fully described.
struct CollectiveCall {
  Collective collective;
  DType dtype;
  ReduceOp op;  // None for collectives that do not reduce
  Placement placement;
  int root;             // 0 where the collective has no root
  std::uint64_t count;  // per-rank count as in the catalogue (alltoallv: the largest buffer of
                        // any rank, in elements)
  void* send;           // unused in place
  void* recv;           // the single buffer in place
  int local = 0;        // which of this process's ranks the buffers belong to (see local_ranks)
  // alltoallv: every local rank's per-peer counts and displacements, made before the call's
  // first issue (its rank's are blocks->local[local]); null for the other collectives.
  const VBlocks* blocks = nullptr;
};

// A communicator with one algorithm choice. Created outside timed regions.
class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Starts one collective; blocking backends complete it before returning.
  virtual void issue(const CollectiveCall& call) = 0;
  // Waits until everything issued has completed (no-op for blocking backends).
  virtual void complete() {}
  // Non-blocking collectives, for patterns that overlap them with compute (replay). start()
  // begins `call` and returns a ticket at once; test() returns when that call completed (steady
  // clock) once it has, never blocking, and drives the library's progress where the library
  // needs its caller to; wait() blocks until it has completed. A failed call throws from test()
  // or wait(). Calls started on one communicator run in the order they were started, the same
  // on every rank. A backend without them leaves nonblocking() false.
  using Ticket = std::uint64_t;
  virtual bool nonblocking() const { return false; }
  virtual Ticket start(const CollectiveCall&) {
    runtime_error("internal: this communicator has no non-blocking collectives");
  }
  virtual std::optional<std::chrono::steady_clock::time_point> test(Ticket) {
    runtime_error("internal: this communicator has no non-blocking collectives");
  }
  virtual void wait(Ticket) {
    runtime_error("internal: this communicator has no non-blocking collectives");
  }
  // Measures iterations; the default reads the host clock after each issue().
  virtual std::unique_ptr<IterationTimer> make_timer() { return make_host_timer(); }
  // Where the result of an in-place call starts, if the backend's convention differs from the
  // catalogue's (MPI_IN_PLACE reduce_scatter puts it at the start of the buffer).
  virtual std::uint64_t in_place_output_offset(Collective c, int rank, std::uint64_t count) const {
    return cb::in_place_output_offset(c, rank, count);
  }
  // What this rank's result region must hold; a backend overrides where its convention differs
  // from the catalogue's (an MPI broadcast root keeps its data in the send buffer).
  virtual std::vector<Segment> expected(const CollectiveCall& call) const {
    if (call.blocks) return expected_segments(call.blocks->local[call.local]);
    return expected_segments(call.collective, rank() + call.local, size(), call.root, call.count);
  }
  // Ranks this process drives (several GPUs per process): rank() .. rank() + local_ranks() - 1,
  // each with its own buffers; issue() runs the call on all of them.
  virtual int local_ranks() const { return 1; }
  // `call` as local rank `l` sees it: its own buffers, `local` set to l.
  virtual CollectiveCall local_call(const CollectiveCall& call, int l) const {
    CollectiveCall c = call;
    c.local = l;
    return c;
  }
  // What the library chose for the last call issued, e.g. "default (RING/SIMPLE, 32 ch)", or
  // empty when it does not say. May run that call once more (every rank calls this together).
  virtual std::string describe_choice() { return {}; }
  // Best-effort abort of outstanding operations, called by the watchdog before exiting.
  virtual void abort() {}
  // Why this communicator's algorithm cannot run `call` as asked (e.g. a forced MPI algorithm
  // that the library would silently replace for this count), or empty when it can. Depends
  // only on what is the same on every rank, so all ranks skip together.
  virtual std::string skip_reason(const CollectiveCall&) const { return {}; }
  // Calls each issue() inside a timed batch makes (NCCL's --cuda-graph N: one launch of a graph
  // of N captured calls); the runner divides its times by it. Outside timed batches (warm-up
  // excepted, validation included) issue() makes one call.
  virtual std::uint64_t calls_per_timed_issue() const { return 1; }
};

// Outcome of asking for an algorithm: a communicator, or the reason it cannot run.
struct Opened {
  std::shared_ptr<Communicator> comm;
  std::string skipped_reason;  // set when comm is null
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual std::string library() const = 0;  // library name and version, e.g. "Open MPI 4.1.4"
  // For the run's meta: also where the library was loaded from and what it runs on.
  virtual std::string library_detail() const { return library(); }
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // The local GPU index this process's rank runs on, where it drives exactly one.
  virtual std::optional<int> local_gpu() const { return std::nullopt; }
  virtual bool supports(Collective c) const = 0;
  virtual bool supports(DType t) const = 0;
  virtual bool supports(Collective c, ReduceOp op) const = 0;
  // Why `op` cannot reduce `t` here although both are supported on their own; empty when it can.
  virtual std::string unsupported(DType, ReduceOp) const { return {}; }
  // How `c` is carried out: "native", "composed from ...", or "not supported".
  virtual std::string implementation(Collective c) const {
    return supports(c) ? "native" : "not supported";
  }
  // Algorithm names this backend can force for `c`, besides "default".
  virtual std::vector<std::string> algorithms(Collective) const { return {}; }
  // Why algorithms() is empty although the library has algorithms (e.g. Open MPI started
  // without dynamic rules); printed once as a warning when -A asks for more than default.
  virtual std::string algorithms_unavailable() const { return {}; }
  virtual Memory& memory() = 0;
  // A communicator running `algorithm` ("default" or a name from algorithms(c)) for `c`.
  virtual Opened open(Collective c, const std::string& algorithm) = 0;
  // How a step program (replay) runs on this backend: null for the host's driver (compute as a
  // busy-wait, collectives through the communicators' start/test/wait), else the device's own
  // (NCCL: compute kernels and collectives ordered on the GPU by events).
  virtual std::unique_ptr<StepDriver> make_step_driver() { return nullptr; }
};

}  // namespace cb
