#include "collectives/backends/gloo/gloo_ops.hpp"

#include <gloo/allgather.h>
#include <gloo/allgather_ring.h>
#include <gloo/allreduce.h>
#include <gloo/allreduce_bcube.h>
#include <gloo/allreduce_halving_doubling.h>
#include <gloo/allreduce_ring.h>
#include <gloo/allreduce_ring_chunked.h>
#include <gloo/alltoall.h>
#include <gloo/alltoallv.h>
#include <gloo/barrier.h>
#include <gloo/barrier_all_to_all.h>
#include <gloo/barrier_all_to_one.h>
#include <gloo/broadcast.h>
#include <gloo/broadcast_one_to_all.h>
#include <gloo/gather.h>
#include <gloo/math.h>
#include <gloo/reduce.h>
#include <gloo/reduce_scatter.h>
#include <gloo/scatter.h>
#include <gloo/types.h>

#include <cstring>
#include <functional>
#include <vector>

#include "common/error.hpp"

namespace cb::gloo_backend {

namespace {

using ReduceFn = void (*)(void*, const void*, const void*, size_t);

// Element types here are trivially copyable in fact (gloo::float16 only declares its own
// assignment), so copies go through void pointers.
void copy_bytes(void* dst, const void* src, std::size_t bytes) {
  std::memcpy(dst, src, bytes);
}

// Slot prefixes for the collectives composed here; Gloo's own use 0x01..0x08.
constexpr std::uint8_t kSendRecvSlotPrefix = 0x40;
constexpr std::uint8_t kRingReduceScatterSlotPrefix = 0x41;

// A run function plus everything it needs kept alive (options, legacy instances, scratch).
class Prepared : public PreparedOp {
 public:
  void run() override { fn(); }
  template <typename T>
  T* keep(std::shared_ptr<T> p) {
    owned.push_back(p);
    return p.get();
  }
  std::vector<std::shared_ptr<void>> owned;
  std::function<void()> fn;
};

template <typename T>
ReduceFn reduce_fn(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return static_cast<ReduceFn>(&::gloo::sum<T>);
    case ReduceOp::Prod:
      return static_cast<ReduceFn>(&::gloo::product<T>);
    case ReduceOp::Min:
      return static_cast<ReduceFn>(&::gloo::min<T>);
    case ReduceOp::Max:
      return static_cast<ReduceFn>(&::gloo::max<T>);
    default:
      runtime_error("Gloo has no {} reduction", name(op));
  }
}

template <typename T>
const ::gloo::ReductionFunction<T>* legacy_fn(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return ::gloo::ReductionFunction<T>::sum;
    case ReduceOp::Prod:
      return ::gloo::ReductionFunction<T>::product;
    case ReduceOp::Min:
      return ::gloo::ReductionFunction<T>::min;
    case ReduceOp::Max:
      return ::gloo::ReductionFunction<T>::max;
    default:
      runtime_error("Gloo has no {} reduction", name(op));
  }
}

// Everything a typed builder needs about one call.
template <typename T>
struct Args {
  const GlooCallSite& site;
  const std::string& algorithm;
  const CollectiveCall& call;
  int rank;
  int size;
  bool in_place;
  std::size_t count;  // per-rank count
  T* send;
  T* recv;  // the single buffer in place
  std::size_t block_bytes() const { return count * sizeof(T); }
};

template <typename T>
void prepare_allreduce(const Args<T>& a, Prepared& p) {
  T* out = a.recv;
  T* in = a.in_place ? nullptr : a.send;
  const std::size_t bytes = a.block_bytes();
  const std::string& algo = a.algorithm;
  if (algo == "default" || algo == "new_ring" || algo == "new_bcube") {
    auto* opts = p.keep(std::make_shared<::gloo::AllreduceOptions>(a.site.context));
    if (algo == "new_ring") opts->setAlgorithm(::gloo::AllreduceOptions::Algorithm::RING);
    if (algo == "new_bcube") opts->setAlgorithm(::gloo::AllreduceOptions::Algorithm::BCUBE);
    if (in) opts->setInput(in, a.count);
    opts->setOutput(out, a.count);
    opts->setReduceFunction(reduce_fn<T>(a.call.op));
    opts->setTimeout(a.site.timeout);
    opts->setTag(a.site.tag);
    p.fn = [opts] { ::gloo::allreduce(*opts); };
    return;
  }
  // Legacy classes reduce in place over their pointers; out of place copies the input first.
  std::vector<T*> ptrs{out};
  const int n = static_cast<int>(a.count);
  const auto* fn = legacy_fn<T>(a.call.op);
  ::gloo::Algorithm* alg = nullptr;
  if (algo == "ring") {
    alg = p.keep(std::make_shared<::gloo::AllreduceRing<T>>(a.site.context, ptrs, n, fn));
  } else if (algo == "ring_chunked") {
    alg = p.keep(std::make_shared<::gloo::AllreduceRingChunked<T>>(a.site.context, ptrs, n, fn));
  } else if (algo == "halving_doubling") {
    alg =
        p.keep(std::make_shared<::gloo::AllreduceHalvingDoubling<T>>(a.site.context, ptrs, n, fn));
  } else if (algo == "bcube") {
    alg = p.keep(std::make_shared<::gloo::AllreduceBcube<T>>(a.site.context, ptrs, n, fn));
  } else {
    runtime_error("Gloo allreduce has no algorithm '{}'", algo);
  }
  p.fn = [alg, in, out, bytes] {
    if (in) copy_bytes(out, in, bytes);
    alg->run();
  };
}

template <typename T>
void prepare_allgather(const Args<T>& a, Prepared& p) {
  const std::size_t total = a.count * static_cast<std::size_t>(a.size);
  if (a.algorithm == "ring") {
    const T* in = a.in_place ? a.recv + static_cast<std::size_t>(a.rank) * a.count : a.send;
    std::vector<const T*> ins{in};
    auto* alg = p.keep(std::make_shared<::gloo::AllgatherRing<T>>(a.site.context, ins, a.recv,
                                                                  static_cast<int>(a.count)));
    p.fn = [alg] { alg->run(); };
    return;
  }
  auto* opts = p.keep(std::make_shared<::gloo::AllgatherOptions>(a.site.context));
  if (!a.in_place) opts->setInput(a.send, a.count);
  opts->setOutput(a.recv, total);
  opts->setTimeout(a.site.timeout);
  opts->setTag(a.site.tag);
  p.fn = [opts] { ::gloo::allgather(*opts); };
}

// Ring reduce-scatter from unbound-buffer send/recv: in n-1 steps each rank passes a partial
// sum one block along the ring and adds its own input for the block it receives; the block
// completed in the last step is this rank's result.
template <typename T>
void prepare_ring_reduce_scatter(const Args<T>& a, Prepared& p) {
  const int n = a.size, r = a.rank;
  const std::size_t count = a.count, bytes = a.block_bytes();
  const T* in = a.in_place ? a.recv : a.send;
  T* out = a.in_place ? a.recv + static_cast<std::size_t>(r) * count : a.recv;
  // Partial sums: in place they overwrite the input blocks already passed on; out of place
  // they go to scratch so the send buffer stays intact.
  T* partial = a.recv;
  if (!a.in_place) {
    auto scratch = std::make_shared<std::vector<T>>(count * static_cast<std::size_t>(n));
    partial = p.keep(scratch)->data();
  }
  auto tmp_store = std::make_shared<std::vector<T>>(count);
  T* tmp = p.keep(tmp_store)->data();
  const ReduceFn fn = reduce_fn<T>(a.call.op);
  if (n == 1) {
    p.fn = [in, out, bytes] {
      if (in != out) copy_bytes(out, in, bytes);
    };
    return;
  }
  auto& ctx = a.site.context;
  const std::size_t total_bytes = bytes * static_cast<std::size_t>(n);
  auto* in_buf = p.keep(std::shared_ptr<::gloo::transport::UnboundBuffer>(
      ctx->createUnboundBuffer(const_cast<T*>(in), total_bytes)));
  auto* partial_buf = p.keep(std::shared_ptr<::gloo::transport::UnboundBuffer>(
      ctx->createUnboundBuffer(partial, total_bytes)));
  auto* tmp_buf = p.keep(
      std::shared_ptr<::gloo::transport::UnboundBuffer>(ctx->createUnboundBuffer(tmp, bytes)));
  const auto slot = ::gloo::Slot::build(kRingReduceScatterSlotPrefix, a.site.tag);
  const auto timeout = a.site.timeout;
  p.fn = [=] {
    const int next = (r + 1) % n, prev = (r - 1 + n) % n;
    for (int s = 0; s + 1 < n; ++s) {
      const std::size_t send_block = static_cast<std::size_t>((r - s - 1 + 2 * n) % n);
      const std::size_t recv_block = static_cast<std::size_t>((r - s - 2 + 2 * n) % n);
      auto* source = s == 0 ? in_buf : partial_buf;
      tmp_buf->recv(prev, slot, 0, bytes);
      source->send(next, slot, send_block * bytes, bytes);
      tmp_buf->waitRecv(timeout);
      T* dst = s + 2 == n ? out : partial + recv_block * count;
      fn(dst, in + recv_block * count, tmp, count);
      source->waitSend(timeout);
    }
  };
}

template <typename T>
void prepare_reduce_scatter(const Args<T>& a, Prepared& p) {
  if (a.algorithm != "halving_doubling") return prepare_ring_reduce_scatter(a, p);
  // ReduceScatterHalvingDoubling reduces in place and leaves this rank's block at the start.
  const std::size_t total = a.count * static_cast<std::size_t>(a.size);
  T* work = a.recv;
  if (!a.in_place) {
    auto scratch = std::make_shared<std::vector<T>>(total);
    work = p.keep(scratch)->data();
  }
  std::vector<int> recv_elems(static_cast<std::size_t>(a.size), static_cast<int>(a.count));
  auto* alg = p.keep(std::make_shared<::gloo::ReduceScatterHalvingDoubling<T>>(
      a.site.context, std::vector<T*>{work}, static_cast<int>(total), recv_elems,
      legacy_fn<T>(a.call.op)));
  if (a.in_place) {
    p.fn = [alg] { alg->run(); };
    return;
  }
  const T* send = a.send;
  T* recv = a.recv;
  const std::size_t bytes = a.block_bytes();
  p.fn = [alg, work, send, recv, total, bytes] {
    copy_bytes(work, send, total * sizeof(T));
    alg->run();
    copy_bytes(recv, work, bytes);
  };
}

template <typename T>
void prepare_broadcast(const Args<T>& a, Prepared& p) {
  const bool root = a.rank == a.call.root;
  if (a.algorithm == "one_to_all") {
    std::vector<T*> ptrs;
    if (root && !a.in_place) ptrs.push_back(a.send);
    ptrs.push_back(a.recv);
    auto* alg = p.keep(std::make_shared<::gloo::BroadcastOneToAll<T>>(a.site.context, ptrs, a.count,
                                                                      a.call.root, 0));
    p.fn = [alg] { alg->run(); };
    return;
  }
  auto* opts = p.keep(std::make_shared<::gloo::BroadcastOptions>(a.site.context));
  if (root && !a.in_place) opts->setInput(a.send, a.count);
  opts->setOutput(a.recv, a.count);
  opts->setRoot(a.call.root);
  opts->setTimeout(a.site.timeout);
  opts->setTag(a.site.tag);
  p.fn = [opts] { ::gloo::broadcast(*opts); };
}

template <typename T>
void prepare_reduce(const Args<T>& a, Prepared& p) {
  auto* opts = p.keep(std::make_shared<::gloo::ReduceOptions>(a.site.context));
  if (!a.in_place) opts->setInput(a.send, a.count);
  opts->setOutput(a.recv, a.count);
  opts->setRoot(a.call.root);
  opts->setReduceFunction(reduce_fn<T>(a.call.op));
  opts->setTimeout(a.site.timeout);
  opts->setTag(a.site.tag);
  p.fn = [opts] { ::gloo::reduce(*opts); };
}

template <typename T>
void prepare_alltoall(const Args<T>& a, Prepared& p) {
  const std::size_t total = a.count * static_cast<std::size_t>(a.size);
  T* in = a.send;
  if (a.in_place) {
    // gloo::alltoall reads its input while peers write the output; in place needs a copy.
    auto scratch = std::make_shared<std::vector<T>>(total);
    in = p.keep(scratch)->data();
  }
  auto* opts = p.keep(std::make_shared<::gloo::AlltoallOptions>(a.site.context));
  opts->setInput(in, total);
  opts->setOutput(a.recv, total);
  opts->setTimeout(a.site.timeout);
  opts->setTag(a.site.tag);
  if (a.in_place) {
    T* buf = a.recv;
    p.fn = [opts, in, buf, total] {
      copy_bytes(in, buf, total * sizeof(T));
      ::gloo::alltoall(*opts);
    };
  } else {
    p.fn = [opts] { ::gloo::alltoall(*opts); };
  }
}

// Out of place only (GlooCommunicator::skip_reason): gloo::alltoallv takes each peer's element
// count and packs the blocks in rank order, as the blocks are laid out.
template <typename T>
void prepare_alltoallv(const Args<T>& a, Prepared& p) {
  const RankBlocks& b = a.call.blocks->local[static_cast<std::size_t>(a.call.local)];
  auto* opts = p.keep(std::make_shared<::gloo::AlltoallvOptions>(a.site.context));
  opts->setInput(a.send, std::vector<std::int64_t>(b.send_counts.begin(), b.send_counts.end()));
  opts->setOutput(a.recv, std::vector<std::int64_t>(b.recv_counts.begin(), b.recv_counts.end()));
  opts->setTimeout(a.site.timeout);
  opts->setTag(a.site.tag);
  p.fn = [opts] { ::gloo::alltoallv(*opts); };
}

template <typename T>
void prepare_gather(const Args<T>& a, Prepared& p) {
  auto* opts = p.keep(std::make_shared<::gloo::GatherOptions>(a.site.context));
  T* in = a.in_place ? a.recv + static_cast<std::size_t>(a.rank) * a.count : a.send;
  opts->setInput(in, a.count);
  if (a.rank == a.call.root) opts->setOutput(a.recv, a.count * static_cast<std::size_t>(a.size));
  opts->setRoot(a.call.root);
  opts->setTimeout(a.site.timeout);
  opts->setTag(a.site.tag);
  p.fn = [opts] { ::gloo::gather(*opts); };
}

template <typename T>
void prepare_scatter(const Args<T>& a, Prepared& p) {
  auto* opts = p.keep(std::make_shared<::gloo::ScatterOptions>(a.site.context));
  if (a.rank == a.call.root) {
    T* base = a.in_place ? a.recv : a.send;
    std::vector<T*> ins;
    for (int q = 0; q < a.size; ++q) ins.push_back(base + static_cast<std::size_t>(q) * a.count);
    opts->setInputs(ins, a.count);
  }
  T* out = a.in_place ? a.recv + static_cast<std::size_t>(a.rank) * a.count : a.recv;
  opts->setOutput(out, a.count);
  opts->setRoot(a.call.root);
  opts->setTimeout(a.site.timeout);
  opts->setTag(a.site.tag);
  p.fn = [opts] { ::gloo::scatter(*opts); };
}

// sendrecv: every rank sends its block to rank+1 and receives rank-1's, over unbound buffers.
template <typename T>
void prepare_sendrecv(const Args<T>& a, Prepared& p) {
  const std::size_t bytes = a.block_bytes();
  T* out = a.recv;
  T* in = a.send;
  if (a.in_place) {
    auto scratch = std::make_shared<std::vector<T>>(a.count);
    in = p.keep(scratch)->data();
  }
  const bool in_place = a.in_place;
  if (a.size == 1) {
    p.fn = [in, out, bytes, in_place] {
      if (!in_place) copy_bytes(out, in, bytes);
    };
    return;
  }
  auto& ctx = a.site.context;
  auto* send_buf = p.keep(
      std::shared_ptr<::gloo::transport::UnboundBuffer>(ctx->createUnboundBuffer(in, bytes)));
  auto* recv_buf = p.keep(
      std::shared_ptr<::gloo::transport::UnboundBuffer>(ctx->createUnboundBuffer(out, bytes)));
  const int next = (a.rank + 1) % a.size, prev = (a.rank - 1 + a.size) % a.size;
  const auto slot = ::gloo::Slot::build(kSendRecvSlotPrefix, a.site.tag);
  const auto timeout = a.site.timeout;
  p.fn = [=] {
    if (in_place) copy_bytes(in, out, bytes);
    recv_buf->recv(prev, slot, 0, bytes);
    send_buf->send(next, slot, 0, bytes);
    recv_buf->waitRecv(timeout);
    send_buf->waitSend(timeout);
  };
}

void prepare_barrier(const GlooCallSite& site, const std::string& algorithm, Prepared& p) {
  if (algorithm == "all_to_all") {
    auto* alg = p.keep(std::make_shared<::gloo::BarrierAllToAll>(site.context));
    p.fn = [alg] { alg->run(); };
  } else if (algorithm == "all_to_one") {
    auto* alg = p.keep(std::make_shared<::gloo::BarrierAllToOne>(site.context, 0));
    p.fn = [alg] { alg->run(); };
  } else {
    auto* opts = p.keep(std::make_shared<::gloo::BarrierOptions>(site.context));
    opts->setTimeout(site.timeout);
    opts->setTag(site.tag);
    p.fn = [opts] { ::gloo::barrier(*opts); };
  }
}

template <typename T>
void prepare_typed(const GlooCallSite& site, const std::string& algorithm,
                   const CollectiveCall& call, Prepared& p) {
  const Args<T> a{site,
                  algorithm,
                  call,
                  site.context->rank,
                  site.context->size,
                  call.placement == Placement::In,
                  static_cast<std::size_t>(call.count),
                  static_cast<T*>(call.send),
                  static_cast<T*>(call.recv)};
  switch (call.collective) {
    case Collective::AllReduce:
      return prepare_allreduce(a, p);
    case Collective::AllGather:
      return prepare_allgather(a, p);
    case Collective::ReduceScatter:
      return prepare_reduce_scatter(a, p);
    case Collective::Broadcast:
      return prepare_broadcast(a, p);
    case Collective::Reduce:
      return prepare_reduce(a, p);
    case Collective::AllToAll:
      return prepare_alltoall(a, p);
    case Collective::Gather:
      return prepare_gather(a, p);
    case Collective::Scatter:
      return prepare_scatter(a, p);
    case Collective::SendRecv:
      return prepare_sendrecv(a, p);
    case Collective::Barrier:
      return prepare_barrier(site, algorithm, p);
    case Collective::AllToAllV:
      return prepare_alltoallv(a, p);
  }
}

}  // namespace

std::unique_ptr<PreparedOp> prepare(const GlooCallSite& site, const std::string& algorithm,
                                    const CollectiveCall& call) {
  auto p = std::make_unique<Prepared>();
  switch (call.dtype) {
    case DType::Int8:
      prepare_typed<std::int8_t>(site, algorithm, call, *p);
      break;
    case DType::Uint8:
      prepare_typed<std::uint8_t>(site, algorithm, call, *p);
      break;
    case DType::Int32:
      prepare_typed<std::int32_t>(site, algorithm, call, *p);
      break;
    case DType::Uint32:
      prepare_typed<std::uint32_t>(site, algorithm, call, *p);
      break;
    case DType::Int64:
      prepare_typed<std::int64_t>(site, algorithm, call, *p);
      break;
    case DType::Uint64:
      prepare_typed<std::uint64_t>(site, algorithm, call, *p);
      break;
    case DType::Half:
      prepare_typed<::gloo::float16>(site, algorithm, call, *p);
      break;
    case DType::Float:
      prepare_typed<float>(site, algorithm, call, *p);
      break;
    case DType::Double:
      prepare_typed<double>(site, algorithm, call, *p);
      break;
    default:
      runtime_error("Gloo has no {} type", info(call.dtype).name);
  }
  return p;
}

}  // namespace cb::gloo_backend
