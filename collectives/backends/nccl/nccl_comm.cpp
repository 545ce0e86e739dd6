#include "collectives/backends/nccl/nccl_comm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <thread>
#include <utility>

#include "collectives/backends/nccl/cuda_check.hpp"
#include "collectives/backends/nccl/nccl_policy.hpp"
#include "collectives/backends/nccl/tuning_log.hpp"
#include "collectives/backends/nccl/unique_id.hpp"
#include "common/error.hpp"
#include "common/units.hpp"

namespace cb::nccl {

namespace {

using namespace std::chrono_literals;

// Busy-waits briefly (calls take microseconds), then backs off (set-up takes seconds).
void pause(std::uint64_t& polls) {
  if (++polls < 4096) {
    std::this_thread::yield();
  } else {
    std::this_thread::sleep_for(50us);
  }
}

std::string describe_call(const CollectiveCall& c) {
  if (c.collective == Collective::Barrier) return "barrier";
  const auto& ci = info(c.collective);
  return fmt::format("{} {} {}", ci.name, format_size(c.count * info(c.dtype).size),
                     info(c.dtype).name);
}

// Bytes an in-place call copies aside first (NCCL has no in-place alltoall or sendrecv).
std::size_t stage_bytes(const CollectiveCall& c, int nranks) {
  if (c.placement != Placement::In) return 0;
  const std::size_t block = c.count * info(c.dtype).size;
  if (c.collective == Collective::AllToAll) return block * static_cast<std::size_t>(nranks);
  if (c.collective == Collective::SendRecv) return block;
  return 0;
}

}  // namespace

// The CUDA-event timer with its start recorded by the communicator's next issue(), right after
// that call has run once untimed (as nccl-tests' untimed operation does): the start event then
// waits behind real work on every rank instead of an idle stream just after a host barrier.
class DeferredStartTimer : public IterationTimer {
 public:
  DeferredStartTimer(NcclCommunicator* comm, std::unique_ptr<IterationTimer> inner)
      : comm_(comm), inner_(std::move(inner)) {}
  ~DeferredStartTimer() override { comm_->deferred_start_ = nullptr; }
  void reserve(std::size_t n) override { inner_->reserve(n); }
  void start() override {
    comm_->deferred_start_ = [t = inner_.get()] { t->start(); };
    comm_->timing_ = true;
  }
  void mark() override { inner_->mark(); }
  // The first call's entry is the start event, recorded by its issue.
  void enter() override {
    if (!comm_->deferred_start_) inner_->enter();
  }
  bool needs_entries() const override { return inner_->needs_entries(); }
  CallStamps call_stamps() override { return inner_->call_stamps(); }
  void stop() override {
    if (auto start = std::exchange(comm_->deferred_start_, nullptr)) start();  // nothing issued
    comm_->timing_ = false;
    inner_->stop();
  }
  std::vector<double> samples_us() override { return inner_->samples_us(); }
  double elapsed_us() override { return inner_->elapsed_us(); }
  bool times_batches_alone() const override { return inner_->times_batches_alone(); }
  bool marks_always_show() const override { return inner_->marks_always_show(); }

 private:
  NcclCommunicator* comm_;
  std::unique_ptr<IterationTimer> inner_;
};

NcclCommunicator::NcclCommunicator(const CommSetup& setup, std::string algorithm)
    : s_(setup), algorithm_(std::move(algorithm)) {
  std::vector<cuda::TimedStream> timed;
  const std::size_t small_bytes = 4 * static_cast<std::size_t>(s_.nranks) * 8 + 256;
  for (int d : s_.devices) {
    cuda::DeviceScope scope(d);
    Lane lane;
    lane.device = d;
    cuda::check(cudaStreamCreateWithFlags(&lane.stream, cudaStreamNonBlocking), "cudaStreamCreate");
    cuda::check(cudaMalloc(&lane.small, small_bytes), "cudaMalloc");
    cuda::check(cudaMemset(lane.small, 0, small_bytes), "cudaMemset");
    lanes_.push_back(lane);
    timed.push_back({d, lane.stream});
  }
  events_ = std::make_shared<cuda::EventPool>(std::move(timed));
}

std::shared_ptr<NcclCommunicator> NcclCommunicator::create(const CommSetup& setup,
                                                           std::string algorithm,
                                                           std::string* failure, int* code) {
  std::shared_ptr<NcclCommunicator> comm(new NcclCommunicator(setup, std::move(algorithm)));
  failure->clear();
  *code = kSuccess;
  comm->init(failure, code);
  if (!failure->empty()) return nullptr;
  return comm;
}

void NcclCommunicator::init(std::string* failure, int* code) {
  const Functions& f = s_.lib->fn;
  const UniqueId id = exchange_unique_id(f, *s_.control);

  // Only NCCL calls inside the group: every device is checked first.
  for (const auto& lane : lanes_) cuda::check(cudaSetDevice(lane.device), "cudaSetDevice");
  config_ = make_config(s_.lib->code(), s_.blocking);
  const bool group = lanes_.size() > 1;
  Outcome out;
  {
    auto use = s_.registry->use();
    if (!group || note(f.GroupStart(), "ncclGroupStart", out)) {
      for (std::size_t l = 0; l < lanes_.size() && !out.result; ++l) {
        Lane& lane = lanes_[l];
        cudaSetDevice(lane.device);
        int rc = f.CommInitRankConfig(&lane.comm, s_.nranks, id,
                                      s_.first_rank + static_cast<int>(l), &config_);
        if (lane.comm) {
          s_.registry->add(lane.comm, [device = lane.device, stream = lane.stream] {
            cuda::DeviceScope scope(device);
            return cudaStreamQuery(stream) != cudaErrorNotReady;
          });
        }
        note(rc, "ncclCommInitRankConfig", out);
      }
      if (group) note(f.GroupEnd(), "ncclGroupEnd", out);
    }
    cudaSetDevice(lanes_.front().device);
  }
  if (!out.result && pending_) {
    if (int state = settle(); state != kSuccess) out = {state, "communicator set-up"};
  }
  if (out.result) {
    *code = out.result;
    *failure = fmt::format("{} returned {}", out.what, reason(out.result));
    abort_lanes();
  }
}

std::string NcclCommunicator::reason(int result) const {
  return result_reason(s_.lib->fn, result);
}

void NcclCommunicator::abort_lanes() {
  auto use = s_.registry->use();
  for (auto& lane : lanes_) {
    if (!lane.comm) continue;
    s_.registry->remove(lane.comm);
    s_.lib->fn.CommAbort(lane.comm);
    lane.comm = nullptr;
  }
  failed_ = true;
}

void NcclCommunicator::fail(const std::string& what, int result) {
  const std::string why = reason(result);  // before the abort adds its own messages
  last_error_ = result;
  abort_lanes();
  runtime_error("NCCL {} failed on rank {}: {}", what, rank(), why);
}

void NcclCommunicator::fail_cuda(const std::string& what, cudaError_t e) {
  cudaGetLastError();
  last_error_ = kCudaFailure;
  abort_lanes();
  runtime_error("{} failed on rank {}: {}", what, rank(), cuda::error_text(e));
}

bool NcclCommunicator::note(int rc, const char* what, Outcome& out) {
  if (rc == kSuccess) return true;
  if (rc == kInProgress) {
    pending_ = true;
    return true;
  }
  if (!out.result) out = {rc, what};
  return false;
}

int NcclCommunicator::settle(std::chrono::steady_clock::duration limit) {
  pending_ = false;
  const auto start = std::chrono::steady_clock::now();
  for (auto& lane : lanes_) {
    std::uint64_t polls = 0;
    for (;;) {
      int state = kSuccess;
      {
        auto use = s_.registry->use();  // released between polls, so the watchdog can abort
        if (!lane.comm) break;
        if (int rc = s_.lib->fn.CommGetAsyncError(lane.comm, &state); rc != kSuccess) return rc;
      }
      if (state == kSuccess) break;
      if (state != kInProgress) return state;
      if (std::chrono::steady_clock::now() - start > limit) return kInProgress;
      pause(polls);
    }
  }
  return kSuccess;
}

CollectiveCall NcclCommunicator::local_call(const CollectiveCall& call, int l) const {
  CollectiveCall c = call;
  c.send = s_.memory->mirror(call.send, l);
  c.recv = s_.memory->mirror(call.recv, l);
  c.local = l;
  return c;
}

void NcclCommunicator::stage(const CollectiveCall& call) {
  if (call.blocks) {
    for (std::size_t l = 0; l < lanes_.size(); ++l) {
      Lane& lane = lanes_[l];
      if (lane.alltoallv_id == call.blocks->id) continue;
      lane.alltoallv = alltoallv_calls(call.blocks->local[l], info(call.dtype).size);
      lane.alltoallv_id = call.blocks->id;
    }
  }
  const std::size_t bytes = stage_bytes(call, s_.nranks);
  if (bytes == 0) return;
  for (std::size_t l = 0; l < lanes_.size(); ++l) {
    Lane& lane = lanes_[l];
    cuda::DeviceScope scope(lane.device);
    if (bytes > lane.stage_bytes) {  // the untimed first call of a batch grows it
      if (cudaError_t e = cudaStreamSynchronize(lane.stream); e != cudaSuccess) {
        fail_cuda("cudaStreamSynchronize", e);
      }
      cudaFree(lane.stage);
      lane.stage = nullptr;
      lane.stage_bytes = 0;
      if (cudaMalloc(&lane.stage, bytes) != cudaSuccess) {
        cudaGetLastError();
        abort_lanes();
        usage_error(
            "cannot allocate {} on GPU {} to stage an in-place call; use a smaller "
            "--max-bytes or --placement out",
            format_size(bytes), lane.device);
      }
      lane.stage_bytes = bytes;
    }
    const void* src = local_call(call, static_cast<int>(l)).recv;
    if (cudaError_t e =
            cudaMemcpyAsync(lane.stage, src, bytes, cudaMemcpyDeviceToDevice, lane.stream);
        e != cudaSuccess) {
      fail_cuda("cudaMemcpyAsync (in-place staging)", e);
    }
  }
}

void NcclCommunicator::enqueue(const CollectiveCall& c, Lane& lane, int rank, Outcome& out) {
  const Functions& f = s_.lib->fn;
  const int type = *datatype_code(c.dtype);
  const int op = c.op == ReduceOp::None ? 0 : *redop_code(c.op);
  const std::size_t n = c.count, es = info(c.dtype).size, block = n * es;
  const int nranks = s_.nranks;
  const bool in = c.placement == Placement::In;
  char* recv = static_cast<char*>(c.recv);
  const char* send = static_cast<const char*>(c.send);
  char* mine = recv + static_cast<std::size_t>(rank) * block;
  const Comm comm = lane.comm;
  const Stream stream = reinterpret_cast<Stream>(lane.stream);
  auto ok = [&](int rc, const char* what) { return note(rc, what, out); };
  // Point-to-point steps of one rank run as one group (nested inside the lanes' group). A
  // failed call inside is recorded by NCCL, and the closing GroupEnd then drops the group.
  auto grouped = [&](auto&& body) {
    if (!ok(f.GroupStart(), "ncclGroupStart")) return;
    body();
    ok(f.GroupEnd(), "ncclGroupEnd");
  };
  switch (c.collective) {
    case Collective::AllReduce:
      ok(f.AllReduce(in ? recv : send, recv, n, type, op, comm, stream), "ncclAllReduce");
      break;
    case Collective::AllGather:  // in place: this rank's block already sits at its slot
      ok(f.AllGather(in ? mine : send, recv, n, type, comm, stream), "ncclAllGather");
      break;
    case Collective::ReduceScatter:  // in place: the result lands at this rank's slot
      ok(f.ReduceScatter(in ? recv : send, in ? mine : recv, n, type, op, comm, stream),
         "ncclReduceScatter");
      break;
    case Collective::Broadcast:
      ok(f.Broadcast(in ? recv : send, recv, n, type, c.root, comm, stream), "ncclBroadcast");
      break;
    case Collective::Reduce:
      ok(f.Reduce(in ? recv : send, recv, n, type, op, c.root, comm, stream), "ncclReduce");
      break;
    case Collective::AllToAll: {
      // In place, stage() has copied the input aside (timed with the call).
      const char* src = in ? static_cast<const char*>(lane.stage) : send;
      if (f.AlltoAll) {
        ok(f.AlltoAll(src, recv, n, type, comm, stream), "ncclAlltoAll");
      } else {
        grouped([&] {
          for (int r = 0; r < nranks; ++r) {
            ok(f.Send(src + r * block, n, type, r, comm, stream), "ncclSend");
            ok(f.Recv(recv + r * block, n, type, r, comm, stream), "ncclRecv");
          }
        });
      }
      break;
    }
    case Collective::Gather: {
      const char* src = in ? mine : send;
      if (f.Gather) {
        ok(f.Gather(src, recv, n, type, c.root, comm, stream), "ncclGather");
      } else {
        grouped([&] {
          if (!(in && rank == c.root)) ok(f.Send(src, n, type, c.root, comm, stream), "ncclSend");
          if (rank != c.root) return;
          for (int r = 0; r < nranks; ++r) {
            if (in && r == rank) continue;
            ok(f.Recv(recv + r * block, n, type, r, comm, stream), "ncclRecv");
          }
        });
      }
      break;
    }
    case Collective::Scatter: {
      const char* src = in ? recv : send;
      char* dst = in ? mine : recv;
      if (f.Scatter) {
        ok(f.Scatter(src, dst, n, type, c.root, comm, stream), "ncclScatter");
      } else {
        grouped([&] {
          if (rank == c.root) {
            for (int r = 0; r < nranks; ++r) {
              if (in && r == rank) continue;
              ok(f.Send(src + r * block, n, type, r, comm, stream), "ncclSend");
            }
          }
          if (!(in && rank == c.root)) ok(f.Recv(dst, n, type, c.root, comm, stream), "ncclRecv");
        });
      }
      break;
    }
    case Collective::SendRecv: {
      const int next = (rank + 1) % nranks, prev = (rank - 1 + nranks) % nranks;
      const char* src = in ? static_cast<const char*>(lane.stage) : send;
      grouped([&] {
        ok(f.Send(src, n, type, next, comm, stream), "ncclSend");
        ok(f.Recv(recv, n, type, prev, comm, stream), "ncclRecv");
      });
      break;
    }
    case Collective::AllToAllV:  // out of place only (skip_reason); stage() made the plan
      grouped([&] {
        for (const P2pCall& p : lane.alltoallv) {
          if (p.send) {
            ok(f.Send(send + p.offset, p.count, type, p.peer, comm, stream), "ncclSend");
          } else {
            ok(f.Recv(recv + p.offset, p.count, type, p.peer, comm, stream), "ncclRecv");
          }
        }
      });
      break;
    case Collective::Barrier:  // a one-element float sum; complete() then waits for it
      ok(f.AllReduce(lane.small, lane.small, 1, *datatype_code(DType::Float),
                     *redop_code(ReduceOp::Sum), comm, stream),
         "ncclAllReduce (barrier)");
      break;
  }
}

NcclCommunicator::Outcome NcclCommunicator::submit(
    const std::function<CollectiveCall(std::size_t)>& call_for) {
  const Functions& f = s_.lib->fn;
  const bool group = lanes_.size() > 1;
  Outcome out;
  {
    auto use = s_.registry->use();
    if (std::any_of(lanes_.begin(), lanes_.end(), [](const Lane& l) { return !l.comm; })) {
      return {kInvalidUsage, "a call on an aborted communicator"};
    }
    if (group && !note(f.GroupStart(), "ncclGroupStart", out)) return out;
    for (std::size_t l = 0; l < lanes_.size() && !out.result; ++l) {
      enqueue(call_for(l), lanes_[l], rank() + static_cast<int>(l), out);
    }
    // Always closed: after an error inside, NCCL's GroupEnd returns it and drops the group.
    if (group) note(f.GroupEnd(), "ncclGroupEnd", out);
  }
  if (!out.result && pending_) {
    if (int state = settle(); state != kSuccess) out = {state, "the call"};
  }
  return out;
}

void NcclCommunicator::run(const CollectiveCall& call) {
  stage(call);
  Outcome out = submit([&](std::size_t l) { return local_call(call, static_cast<int>(l)); });
  if (out.result) fail(fmt::format("{} ({})", out.what, describe_call(call)), out.result);
}

void NcclCommunicator::issue(const CollectiveCall& call) {
  if (closed_) runtime_error("internal: a closed NCCL communicator was used");
  last_ = call;
  issued_ = true;
  const bool graphed = s_.graph_calls > 0 && timing_;
  if (auto start = std::exchange(deferred_start_, nullptr)) {
    run(call);  // untimed
    if (graphed) {
      capture_graphs(call);
      launch_graphs();  // untimed too: the first launch uploads the graph
    }
    start();
  }
  if (graphed) {
    launch_graphs();
  } else {
    run(call);
  }
}

std::vector<cuda::TimedStream> NcclCommunicator::lane_streams() const {
  std::vector<cuda::TimedStream> out;
  for (const auto& lane : lanes_) out.push_back({lane.device, lane.stream});
  return out;
}

void NcclCommunicator::enqueue_call(const CollectiveCall& call) {
  if (closed_) runtime_error("internal: a closed NCCL communicator was used");
  last_ = call;
  issued_ = true;
  run(call);
}

namespace {
bool same_call(const CollectiveCall& a, const CollectiveCall& b) {
  return a.collective == b.collective && a.dtype == b.dtype && a.op == b.op &&
         a.placement == b.placement && a.root == b.root && a.count == b.count && a.send == b.send &&
         a.recv == b.recv && (a.blocks ? a.blocks->id : 0) == (b.blocks ? b.blocks->id : 0);
}
}  // namespace

void NcclCommunicator::capture_graphs(const CollectiveCall& call) {
  if (graph_for_ && same_call(*graph_for_, call)) return;
  release_graphs();
  // Thread-local capture mode, as nccl-tests uses: only this thread's calls are captured.
  for (auto& lane : lanes_) {
    cuda::DeviceScope scope(lane.device);
    if (cudaError_t e = cudaStreamBeginCapture(lane.stream, cudaStreamCaptureModeThreadLocal);
        e != cudaSuccess) {
      fail_cuda("cudaStreamBeginCapture", e);
    }
  }
  for (int k = 0; k < s_.graph_calls; ++k) run(call);
  for (auto& lane : lanes_) {
    cuda::DeviceScope scope(lane.device);
    cudaGraph_t graph = nullptr;
    cudaError_t e = cudaStreamEndCapture(lane.stream, &graph);
    if (e == cudaSuccess) e = cudaGraphInstantiate(&lane.graph, graph, 0);
    if (graph) cudaGraphDestroy(graph);
    if (e != cudaSuccess) fail_cuda("capturing a CUDA graph of " + describe_call(call), e);
  }
  graph_for_ = call;
}

void NcclCommunicator::launch_graphs() {
  for (auto& lane : lanes_) {
    cuda::DeviceScope scope(lane.device);
    if (cudaError_t e = cudaGraphLaunch(lane.graph, lane.stream); e != cudaSuccess) {
      fail_cuda("cudaGraphLaunch (" + describe_call(last_) + ")", e);
    }
  }
}

void NcclCommunicator::release_graphs() {
  for (auto& lane : lanes_) {
    if (!lane.graph) continue;
    cuda::DeviceScope scope(lane.device);
    cudaGraphExecDestroy(lane.graph);
    lane.graph = nullptr;
  }
  graph_for_.reset();
}

void NcclCommunicator::complete() {
  for (auto& lane : lanes_) {
    std::uint64_t polls = 0;
    for (;;) {
      {
        auto use = s_.registry->use();
        cudaError_t e = cudaStreamQuery(lane.stream);
        if (e == cudaSuccess) break;
        if (e != cudaErrorNotReady) {
          fail_cuda(fmt::format("waiting for {} on GPU {}", describe_call(last_), lane.device), e);
        }
        if (polls % 1024 == 0 && lane.comm) {  // a peer's failure shows up as an async error
          int state = kSuccess;
          s_.lib->fn.CommGetAsyncError(lane.comm, &state);
          if (state != kSuccess && state != kInProgress) {
            fail(fmt::format("{} (asynchronous error)", describe_call(last_)), state);
          }
        }
      }
      pause(polls);
    }
  }
}

std::unique_ptr<IterationTimer> NcclCommunicator::make_timer() {
  return std::make_unique<DeferredStartTimer>(this, cuda::make_event_timer(events_));
}

std::string NcclCommunicator::describe_choice() {
  if (!s_.capture || s_.capture->mode() == TuningCapture::Mode::Off) return "";
  const std::string_view function = tuning_function(last_.collective);
  // Lines nobody asks about (a forced algorithm's, point-to-point) are dropped right away.
  if (algorithm_ != "default" || !issued_ || function.empty()) {
    s_.capture->discard();
    return "";
  }
  const CollectiveCall call = last_;
  if (s_.watchdog) s_.watchdog->arm("NCCL's choice for " + describe_call(call));
  std::vector<std::string> lines = s_.capture->capture([&] {
    issue(call);
    complete();
  });
  if (s_.watchdog) s_.watchdog->disarm();
  const std::uint64_t es = info(call.dtype).size;
  std::vector<std::uint64_t> bytes = {call.count * es, call.count * es * s_.nranks};
  if (call.collective == Collective::Barrier) bytes = {4};
  auto choice = find_choice(lines, function, bytes);
  return choice ? fmt::format("default ({})", describe(*choice)) : "";
}

std::string NcclCommunicator::probe(Collective c, const std::vector<DType>& dtypes,
                                    const std::vector<ReduceOp>& ops, int* code) {
  const bool reduces = info(c).reduces;
  const std::size_t half = 2 * static_cast<std::size_t>(s_.nranks) * 8;
  for (DType t : dtypes) {
    for (ReduceOp op : reduces ? ops : std::vector<ReduceOp>{ReduceOp::None}) {
      const std::string what = fmt::format("{} {} {}", info(c).name, info(t).name, name(op));
      Outcome out = submit([&](std::size_t l) {
        char* small = static_cast<char*>(lanes_[l].small);
        return CollectiveCall{c, t,     op,           Placement::Out,     0,
                              1, small, small + half, static_cast<int>(l)};
      });
      if (out.result) {
        *code = out.result;
        std::string why = fmt::format("{}: {} returned {}", what, out.what, reason(out.result));
        abort_lanes();
        return why;
      }
      try {
        last_error_ = kInternalError;
        complete();
      } catch (const Error& e) {
        *code = last_error_;
        return fmt::format("{}: {}", what, e.what());
      }
    }
  }
  return "";
}

void NcclCommunicator::abort() {
  abort_lanes();
}

std::string NcclCommunicator::skip_reason(const CollectiveCall& call) const {
  if (call.collective == Collective::AllToAllV && call.placement == Placement::In) {
    return "in place: grouped ncclSend/ncclRecv would overwrite blocks not yet sent";
  }
  return {};
}

void NcclCommunicator::close() {
  destroy();
  closed_ = true;
}

NcclCommunicator::~NcclCommunicator() {
  destroy();
}

void NcclCommunicator::destroy() {
  if (closed_) return;
  closed_ = true;
  const Functions& f = s_.lib->fn;
  if (s_.registry->aborting()) return;  // the watchdog owns the communicators now, and exits
  // Finalize waits for every peer to quiesce; bounded, so a dead peer cannot hang the exit.
  bool clean = !failed_;
  {
    auto use = s_.registry->use();
    for (auto& lane : lanes_) {
      if (!clean || !lane.comm) continue;
      int rc = f.CommFinalize(lane.comm);
      clean = rc == kSuccess || rc == kInProgress;
      pending_ = pending_ || rc == kInProgress;
    }
  }
  if (clean && pending_) clean = settle(std::chrono::seconds(30)) == kSuccess;
  {
    auto use = s_.registry->use();
    for (auto& lane : lanes_) {
      if (!lane.comm) continue;
      s_.registry->remove(lane.comm);
      (clean ? f.CommDestroy : f.CommAbort)(lane.comm);
      lane.comm = nullptr;
    }
  }
  for (auto& lane : lanes_) {
    cuda::DeviceScope scope(lane.device);
    cudaStreamSynchronize(lane.stream);
    if (lane.graph) cudaGraphExecDestroy(lane.graph);
    lane.graph = nullptr;
    cudaFree(lane.small);
    cudaFree(lane.stage);
    cudaStreamDestroy(lane.stream);
    lane.small = lane.stage = nullptr;
    lane.stage_bytes = 0;
    lane.stream = nullptr;
  }
  graph_for_.reset();
  // The pool's events (up to kMaxTimedEvents + 1 per GPU) go now, not when the last holder of
  // this object does; a timer still holding the pool keeps it until the timer goes.
  events_.reset();
}

}  // namespace cb::nccl
