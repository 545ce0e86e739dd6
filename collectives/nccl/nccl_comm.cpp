#include "collectives/nccl/nccl_comm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <future>
#include <thread>

#include "collectives/nccl/cuda_check.hpp"
#include "collectives/nccl/tuning_log.hpp"
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

}  // namespace

void CommRegistry::add(Comm c) {
  std::lock_guard lock(mu_);
  comms_.push_back(c);
}

void CommRegistry::remove(Comm c) {
  std::lock_guard lock(mu_);
  comms_.erase(std::remove(comms_.begin(), comms_.end(), c), comms_.end());
}

void CommRegistry::abort_all(std::chrono::seconds limit) {
  aborting_.store(true);
  std::vector<Comm> comms;
  {
    std::unique_lock lock(mu_, std::defer_lock);
    if (!lock.try_lock_for(2s)) return;
    comms.swap(comms_);
  }
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> finished = done->get_future();
  std::thread([comms, abort = abort_, done] {
    for (Comm c : comms) abort(c);
    done->set_value();
  }).detach();
  finished.wait_for(limit);
}

void CommRegistry::park() const {
  for (;;) std::this_thread::sleep_for(1s);
}

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
                                                           std::string* failure) {
  std::shared_ptr<NcclCommunicator> comm(new NcclCommunicator(setup, std::move(algorithm)));
  failure->clear();
  comm->init(failure);
  if (!failure->empty()) return nullptr;
  return comm;
}

void NcclCommunicator::init(std::string* failure) {
  const Functions& f = s_.lib->fn;
  // Rank 0 makes the id; every process takes it through the run's control channel.
  UniqueId id{};
  std::string mine;
  if (s_.control->rank() == 0) {
    if (int rc = f.GetUniqueId(&id); rc != kSuccess) fail("ncclGetUniqueId", rc);
    mine.assign(id.internal, sizeof id.internal);
  }
  std::vector<std::string> all = s_.control->allgather(mine);
  if (all.empty() || all.front().size() != sizeof id.internal) {
    runtime_error("NCCL unique id exchange through the control channel failed");
  }
  std::memcpy(id.internal, all.front().data(), sizeof id.internal);

  config_ = make_config(s_.lib->code(), s_.blocking);
  const bool group = lanes_.size() > 1;
  auto record = [&](int rc, const char* what) {
    if (rc == kSuccess || rc == kInProgress) return true;
    failed_ = true;
    *failure = fmt::format("{} returned {}", what, reason(rc));
    return false;
  };
  bool ok = !group || record(f.GroupStart(), "ncclGroupStart");
  for (std::size_t l = 0; ok && l < lanes_.size(); ++l) {
    cuda::check(cudaSetDevice(lanes_[l].device), "cudaSetDevice");
    int rc = f.CommInitRankConfig(&lanes_[l].comm, s_.nranks, id,
                                  s_.first_rank + static_cast<int>(l), &config_);
    if (lanes_[l].comm) s_.registry->add(lanes_[l].comm);
    ok = record(rc, "ncclCommInitRankConfig");
  }
  if (group) ok = record(f.GroupEnd(), "ncclGroupEnd") && ok;
  cuda::check(cudaSetDevice(lanes_.front().device), "cudaSetDevice");
  if (!ok) return;
  if (int state = settle(); state != kSuccess) {
    failed_ = true;
    *failure = fmt::format("communicator set-up failed: {}", reason(state));
  }
}

std::string NcclCommunicator::reason(int result) const {
  const Functions& f = s_.lib->fn;
  std::string text = fmt::format("{} ({})", result_name(result), f.GetErrorString(result));
  const char* last = f.GetLastError(nullptr);
  if (last && *last) text += fmt::format("; NCCL says: {}", last);
  return text;
}

void NcclCommunicator::fail(const std::string& what, int result) {
  failed_ = true;
  runtime_error("NCCL {} failed on rank {}: {}", what, rank(), reason(result));
}

void NcclCommunicator::accept(int rc, const char* what) {
  if (rc == kSuccess) return;
  if (rc == kInProgress) {
    pending_ = true;
    return;
  }
  fail(what, rc);
}

int NcclCommunicator::settle(std::chrono::steady_clock::duration limit) {
  pending_ = false;
  const auto start = std::chrono::steady_clock::now();
  for (auto& lane : lanes_) {
    std::uint64_t polls = 0;
    for (;;) {
      if (s_.registry->aborting()) s_.registry->park();
      int state = kSuccess;
      if (int rc = s_.lib->fn.CommGetAsyncError(lane.comm, &state); rc != kSuccess) return rc;
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

void* NcclCommunicator::staged(Lane& lane, const void* src, std::size_t bytes) {
  if (bytes > lane.stage_bytes) {  // grows during warm-up, outside timed iterations
    cuda::DeviceScope scope(lane.device);
    cuda::check(cudaStreamSynchronize(lane.stream), "cudaStreamSynchronize");
    cudaFree(lane.stage);
    lane.stage = nullptr;
    lane.stage_bytes = 0;
    if (cudaMalloc(&lane.stage, bytes) != cudaSuccess) {
      cudaGetLastError();
      usage_error(
          "cannot allocate {} on GPU {} to stage an in-place call; use a smaller "
          "--max-bytes or --placement out",
          format_size(bytes), lane.device);
    }
    lane.stage_bytes = bytes;
  }
  if (lanes_.size() > 1) cuda::check(cudaSetDevice(lane.device), "cudaSetDevice");
  cuda::check(cudaMemcpyAsync(lane.stage, src, bytes, cudaMemcpyDeviceToDevice, lane.stream),
              "cudaMemcpyAsync (in-place staging)");
  return lane.stage;
}

void NcclCommunicator::enqueue(const CollectiveCall& c, Lane& lane, int rank) {
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
  // Point-to-point steps of one rank run as one group (nested inside the lanes' group).
  auto grouped = [&](auto&& body) {
    accept(f.GroupStart(), "ncclGroupStart");
    try {
      body();
    } catch (...) {
      f.GroupEnd();
      throw;
    }
    accept(f.GroupEnd(), "ncclGroupEnd");
  };
  switch (c.collective) {
    case Collective::AllReduce:
      accept(f.AllReduce(in ? recv : send, recv, n, type, op, comm, stream), "ncclAllReduce");
      break;
    case Collective::AllGather:  // in place: this rank's block already sits at its slot
      accept(f.AllGather(in ? mine : send, recv, n, type, comm, stream), "ncclAllGather");
      break;
    case Collective::ReduceScatter:  // in place: the result lands at this rank's slot
      accept(f.ReduceScatter(in ? recv : send, in ? mine : recv, n, type, op, comm, stream),
             "ncclReduceScatter");
      break;
    case Collective::Broadcast:
      accept(f.Broadcast(in ? recv : send, recv, n, type, c.root, comm, stream), "ncclBroadcast");
      break;
    case Collective::Reduce:
      accept(f.Reduce(in ? recv : send, recv, n, type, op, c.root, comm, stream), "ncclReduce");
      break;
    case Collective::AllToAll: {
      // NCCL has no in-place alltoall: the input is copied aside first (timed with the call).
      const char* src = in ? static_cast<const char*>(staged(lane, recv, block * nranks)) : send;
      if (f.AlltoAll) {
        accept(f.AlltoAll(src, recv, n, type, comm, stream), "ncclAlltoAll");
      } else {
        grouped([&] {
          for (int r = 0; r < nranks; ++r) {
            accept(f.Send(src + r * block, n, type, r, comm, stream), "ncclSend");
            accept(f.Recv(recv + r * block, n, type, r, comm, stream), "ncclRecv");
          }
        });
      }
      break;
    }
    case Collective::Gather: {
      const char* src = in ? mine : send;
      if (f.Gather) {
        accept(f.Gather(src, recv, n, type, c.root, comm, stream), "ncclGather");
      } else {
        grouped([&] {
          if (!(in && rank == c.root))
            accept(f.Send(src, n, type, c.root, comm, stream), "ncclSend");
          if (rank != c.root) return;
          for (int r = 0; r < nranks; ++r) {
            if (in && r == rank) continue;
            accept(f.Recv(recv + r * block, n, type, r, comm, stream), "ncclRecv");
          }
        });
      }
      break;
    }
    case Collective::Scatter: {
      const char* src = in ? recv : send;
      char* dst = in ? mine : recv;
      if (f.Scatter) {
        accept(f.Scatter(src, dst, n, type, c.root, comm, stream), "ncclScatter");
      } else {
        grouped([&] {
          if (rank == c.root) {
            for (int r = 0; r < nranks; ++r) {
              if (in && r == rank) continue;
              accept(f.Send(src + r * block, n, type, r, comm, stream), "ncclSend");
            }
          }
          if (!(in && rank == c.root))
            accept(f.Recv(dst, n, type, c.root, comm, stream), "ncclRecv");
        });
      }
      break;
    }
    case Collective::SendRecv: {
      const int next = (rank + 1) % nranks, prev = (rank - 1 + nranks) % nranks;
      const char* src = in ? static_cast<const char*>(staged(lane, recv, block)) : send;
      grouped([&] {
        accept(f.Send(src, n, type, next, comm, stream), "ncclSend");
        accept(f.Recv(recv, n, type, prev, comm, stream), "ncclRecv");
      });
      break;
    }
    case Collective::Barrier:  // a one-element float sum; complete() then waits for it
      accept(f.AllReduce(lane.small, lane.small, 1, *datatype_code(DType::Float),
                         *redop_code(ReduceOp::Sum), comm, stream),
             "ncclAllReduce (barrier)");
      break;
  }
}

void NcclCommunicator::issue(const CollectiveCall& call) {
  last_ = call;
  issued_ = true;
  const Functions& f = s_.lib->fn;
  if (lanes_.size() == 1) {
    enqueue(call, lanes_.front(), rank());
  } else {
    accept(f.GroupStart(), "ncclGroupStart");
    try {
      for (std::size_t l = 0; l < lanes_.size(); ++l) {
        enqueue(local_call(call, static_cast<int>(l)), lanes_[l], rank() + static_cast<int>(l));
      }
    } catch (...) {
      f.GroupEnd();
      throw;
    }
    accept(f.GroupEnd(), "ncclGroupEnd");
  }
  if (pending_) {
    if (int state = settle(); state != kSuccess) fail(describe_call(call), state);
  }
}

void NcclCommunicator::complete() {
  for (auto& lane : lanes_) {
    std::uint64_t polls = 0;
    for (;;) {
      cudaError_t e = cudaStreamQuery(lane.stream);
      if (e == cudaSuccess) break;
      if (e != cudaErrorNotReady) {
        failed_ = true;
        runtime_error("waiting for {} on GPU {} failed: {}", describe_call(last_), lane.device,
                      cuda::error_text(e));
      }
      if (s_.registry->aborting()) s_.registry->park();
      if (polls % 1024 == 0) {  // a peer's failure shows up as the communicator's async error
        int state = kSuccess;
        s_.lib->fn.CommGetAsyncError(lane.comm, &state);
        if (state != kSuccess && state != kInProgress) {
          fail(fmt::format("{} (asynchronous error)", describe_call(last_)), state);
        }
      }
      pause(polls);
    }
  }
}

std::unique_ptr<IterationTimer> NcclCommunicator::make_timer() {
  return cuda::make_event_timer(events_);
}

std::string NcclCommunicator::describe_choice() {
  if (algorithm_ != "default" || !issued_ || !s_.capture) return "";
  if (s_.capture->mode() == TuningCapture::Mode::Off) return "";
  const std::string_view function = tuning_function(last_.collective);
  if (function.empty()) return "";  // point-to-point: NCCL prints no choice
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
                                    const std::vector<ReduceOp>& ops) {
  const bool reduces = info(c).reduces;
  const std::size_t half = 2 * static_cast<std::size_t>(s_.nranks) * 8;
  for (DType t : dtypes) {
    for (ReduceOp op : reduces ? ops : std::vector<ReduceOp>{ReduceOp::None}) {
      CollectiveCall call{c, t, op, Placement::Out, 0, 1, nullptr, nullptr, 0};
      try {
        if (lanes_.size() > 1) accept(s_.lib->fn.GroupStart(), "ncclGroupStart");
        for (std::size_t l = 0; l < lanes_.size(); ++l) {
          call.send = lanes_[l].small;
          call.recv = static_cast<char*>(lanes_[l].small) + half;
          call.local = static_cast<int>(l);
          enqueue(call, lanes_[l], rank() + static_cast<int>(l));
        }
        if (lanes_.size() > 1) accept(s_.lib->fn.GroupEnd(), "ncclGroupEnd");
        if (int state = pending_ ? settle() : kSuccess; state != kSuccess) {
          failed_ = true;
          return fmt::format("{} {} {}: {}", info(c).name, info(t).name, name(op), reason(state));
        }
        complete();
      } catch (const Error& e) {
        failed_ = true;
        return fmt::format("{} {} {}: {}", info(c).name, info(t).name, name(op), e.what());
      }
    }
  }
  return "";
}

void NcclCommunicator::abort() {
  for (auto& lane : lanes_) {
    if (!lane.comm) continue;
    s_.registry->remove(lane.comm);
    s_.lib->fn.CommAbort(lane.comm);
    lane.comm = nullptr;
  }
  failed_ = true;
}

NcclCommunicator::~NcclCommunicator() {
  destroy();
}

void NcclCommunicator::destroy() {
  const Functions& f = s_.lib->fn;
  for (auto& lane : lanes_) {
    if (lane.comm) s_.registry->remove(lane.comm);
  }
  if (s_.registry->aborting()) return;  // the watchdog owns them now, and exits
  // Finalize waits for every peer to quiesce; bounded, so a dead peer cannot hang the exit.
  bool clean = !failed_;
  for (auto& lane : lanes_) {
    if (!clean || !lane.comm) continue;
    int rc = f.CommFinalize(lane.comm);
    clean = rc == kSuccess || rc == kInProgress;
  }
  if (clean) clean = settle(std::chrono::seconds(30)) == kSuccess;
  for (auto& lane : lanes_) {
    if (lane.comm) (clean ? f.CommDestroy : f.CommAbort)(lane.comm);
    lane.comm = nullptr;
    cuda::DeviceScope scope(lane.device);
    cudaStreamSynchronize(lane.stream);
    cudaFree(lane.small);
    cudaFree(lane.stage);
    cudaStreamDestroy(lane.stream);
  }
}

}  // namespace cb::nccl
