// MPI backend: each collective maps to its MPI call; in place uses MPI_IN_PLACE.
#include "collectives/backends/mpi/mpi_backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <map>
#include <optional>

#include "collectives/backends/mpi/mpi_algorithm_select.hpp"
#include "collectives/backends/mpi/mpi_runtime.hpp"
#include "common/error.hpp"

namespace cb::mpi {

namespace {

MPI_Datatype datatype(DType t) {
  switch (t) {
    case DType::Int8:
      return MPI_INT8_T;
    case DType::Uint8:
      return MPI_UINT8_T;
    case DType::Int32:
      return MPI_INT32_T;
    case DType::Uint32:
      return MPI_UINT32_T;
    case DType::Int64:
      return MPI_INT64_T;
    case DType::Uint64:
      return MPI_UINT64_T;
    case DType::Float:
      return MPI_FLOAT;
    case DType::Double:
      return MPI_DOUBLE;
    default:
      return MPI_DATATYPE_NULL;
  }
}

MPI_Op reduction(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return MPI_SUM;
    case ReduceOp::Prod:
      return MPI_PROD;
    case ReduceOp::Min:
      return MPI_MIN;
    case ReduceOp::Max:
      return MPI_MAX;
    default:
      return MPI_OP_NULL;
  }
}

// A duplicate of MPI_COMM_WORLD running one algorithm choice for one collective (see
// mpi_algorithm_select.hpp for how Open MPI and MPICH are told).
class MpiCommunicator : public Communicator {
 public:
  MpiCommunicator(MPI_Comm comm, MpiFlavor flavor, std::string algorithm,
                  std::optional<MpichChoice> choice, bool multi_node)
      : comm_(comm),
        flavor_(flavor),
        algorithm_(std::move(algorithm)),
        choice_(choice),
        multi_node_(multi_node) {
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiCommunicator() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void issue(const CollectiveCall& c) override {
    if (c.count > static_cast<std::uint64_t>(INT_MAX)) {
      usage_error("count {} exceeds MPI's int element count; use a smaller --max-bytes", c.count);
    }
    if (choice_) activate(*choice_);  // MPICH reads its algorithm CVAR at every call
    const int n = static_cast<int>(c.count);
    const MPI_Datatype t = datatype(c.dtype);
    const bool in = c.placement == Placement::In;
    char* buf = static_cast<char*>(c.recv);
    const std::size_t block = c.count * info(c.dtype).size;
    char* mine = buf + static_cast<std::size_t>(rank_) * block;
    const bool root = rank_ == c.root;
    int rc = MPI_SUCCESS;
    switch (c.collective) {
      case Collective::AllReduce:
        rc = MPI_Allreduce(in ? MPI_IN_PLACE : c.send, buf, n, t, reduction(c.op), comm_);
        break;
      case Collective::AllGather:
        rc = in ? MPI_Allgather(MPI_IN_PLACE, 0, t, buf, n, t, comm_)
                : MPI_Allgather(c.send, n, t, buf, n, t, comm_);
        break;
      case Collective::ReduceScatter:
        rc =
            MPI_Reduce_scatter_block(in ? MPI_IN_PLACE : c.send, buf, n, t, reduction(c.op), comm_);
        break;
      case Collective::Broadcast:
        // Out of place the root sends from its send buffer; the others receive.
        rc = MPI_Bcast(!in && root ? c.send : buf, n, t, c.root, comm_);
        break;
      case Collective::Reduce:
        if (in) {
          rc = MPI_Reduce(root ? MPI_IN_PLACE : buf, root ? buf : nullptr, n, t, reduction(c.op),
                          c.root, comm_);
        } else {
          rc = MPI_Reduce(c.send, buf, n, t, reduction(c.op), c.root, comm_);
        }
        break;
      case Collective::AllToAll:
        rc = in ? MPI_Alltoall(MPI_IN_PLACE, 0, t, buf, n, t, comm_)
                : MPI_Alltoall(c.send, n, t, buf, n, t, comm_);
        break;
      case Collective::Gather:
        if (in) {
          rc = root ? MPI_Gather(MPI_IN_PLACE, n, t, buf, n, t, c.root, comm_)
                    : MPI_Gather(mine, n, t, nullptr, n, t, c.root, comm_);
        } else {
          rc = MPI_Gather(c.send, n, t, buf, n, t, c.root, comm_);
        }
        break;
      case Collective::Scatter:
        if (in) {
          rc = root ? MPI_Scatter(buf, n, t, MPI_IN_PLACE, n, t, c.root, comm_)
                    : MPI_Scatter(nullptr, n, t, mine, n, t, c.root, comm_);
        } else {
          rc = MPI_Scatter(c.send, n, t, buf, n, t, c.root, comm_);
        }
        break;
      case Collective::SendRecv: {
        const int next = (rank_ + 1) % size_, prev = (rank_ - 1 + size_) % size_;
        rc = in ? MPI_Sendrecv_replace(buf, n, t, next, 0, prev, 0, comm_, MPI_STATUS_IGNORE)
                : MPI_Sendrecv(c.send, n, t, next, 0, buf, n, t, prev, 0, comm_, MPI_STATUS_IGNORE);
        break;
      }
      case Collective::Barrier:
        rc = MPI_Barrier(comm_);
        break;
      case Collective::AllToAllV: {
        // In place, MPI sends each peer the block it receives from it: recvcounts and rdispls
        // serve both ways (skip_reason leaves out the splits that are not symmetric).
        const IntBlocks& b = int_blocks(c);
        rc = in ? MPI_Alltoallv(MPI_IN_PLACE, b.rc.data(), b.rd.data(), t, buf, b.rc.data(),
                                b.rd.data(), t, comm_)
                : MPI_Alltoallv(c.send, b.sc.data(), b.sd.data(), t, buf, b.rc.data(), b.rd.data(),
                                t, comm_);
        break;
      }
    }
    if (rc != MPI_SUCCESS && algorithm_ != "default") {
      check(rc, fmt::format("{} (algorithm {})", name(c.collective), algorithm_).c_str());
    }
    if (rc != MPI_SUCCESS) check(rc, std::string(name(c.collective)).c_str());
  }

  // Non-blocking: MPI_Iallreduce, MPI_Iallgather and MPI_Ireduce_scatter_block, which progress
  // when the library is entered (test() is MPI_Test).
  bool nonblocking() const override { return true; }

  Ticket start(const CollectiveCall& c) override {
    if (c.count > static_cast<std::uint64_t>(INT_MAX)) {
      usage_error("count {} exceeds MPI's int element count", c.count);
    }
    const int n = static_cast<int>(c.count);
    const MPI_Datatype t = datatype(c.dtype);
    const bool in = c.placement == Placement::In;
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = MPI_SUCCESS;
    switch (c.collective) {
      case Collective::AllReduce:
        rc = MPI_Iallreduce(in ? MPI_IN_PLACE : c.send, c.recv, n, t, reduction(c.op), comm_, &req);
        break;
      case Collective::AllGather:
        rc = in ? MPI_Iallgather(MPI_IN_PLACE, 0, t, c.recv, n, t, comm_, &req)
                : MPI_Iallgather(c.send, n, t, c.recv, n, t, comm_, &req);
        break;
      case Collective::ReduceScatter:
        rc = MPI_Ireduce_scatter_block(in ? MPI_IN_PLACE : c.send, c.recv, n, t, reduction(c.op),
                                       comm_, &req);
        break;
      default:
        runtime_error("internal: no non-blocking {} on the mpi backend", name(c.collective));
    }
    check(rc, fmt::format("non-blocking {}", name(c.collective)).c_str());
    pending_[next_ticket_] = {req, std::nullopt};
    return next_ticket_++;
  }

  std::optional<std::chrono::steady_clock::time_point> test(Ticket ticket) override {
    Pending& p = pending_.at(ticket);
    if (!p.done) {
      int flag = 0;
      check(MPI_Test(&p.request, &flag, MPI_STATUS_IGNORE), "MPI_Test");
      if (flag) p.done = std::chrono::steady_clock::now();
    }
    const auto done = p.done;
    if (done) pending_.erase(ticket);
    return done;
  }

  void wait(Ticket ticket) override {
    Pending& p = pending_.at(ticket);
    if (p.done) return;
    check(MPI_Wait(&p.request, MPI_STATUS_IGNORE), "MPI_Wait");
    p.done = std::chrono::steady_clock::now();
  }

  std::uint64_t in_place_output_offset(Collective c, int rank, std::uint64_t count) const override {
    // MPI_IN_PLACE reduce_scatter leaves the result at the start of the buffer.
    if (c == Collective::ReduceScatter) return 0;
    return cb::in_place_output_offset(c, rank, count);
  }

  std::vector<Segment> expected(const CollectiveCall& call) const override {
    // An out-of-place broadcast root keeps its data in its send buffer.
    if (call.collective == Collective::Broadcast && call.placement == Placement::Out &&
        rank_ == call.root) {
      return {};
    }
    return Communicator::expected(call);
  }

  std::string skip_reason(const CollectiveCall& call) const override {
    if (call.blocks && call.placement == Placement::In && !call.blocks->symmetric) {
      return "in place: MPI_Alltoallv in place sends each peer what it receives from it, and this "
             "split is not symmetric";
    }
    CallTraits t;
    t.collective = call.collective;
    t.nranks = size_;
    t.count = call.count;
    t.type_size = info(call.dtype).size;
    t.in_place = call.placement == Placement::In;
    t.multi_node = multi_node_;
    return inapplicable_reason(flavor_, algorithm_, t);
  }

 private:
  // alltoallv's counts and displacements as MPI takes them, made at a call's first issue (in the
  // warm-up) and kept while its blocks stay the same; issue()'s count check bounds them.
  struct IntBlocks {
    std::uint64_t id = 0;
    int local = -1;
    std::vector<int> sc, sd, rc, rd;
  };
  const IntBlocks& int_blocks(const CollectiveCall& c) {
    if (ints_.id == c.blocks->id && ints_.local == c.local) return ints_;
    const RankBlocks& b = c.blocks->local[static_cast<std::size_t>(c.local)];
    auto to_int = [](const std::vector<std::uint64_t>& v) {
      return std::vector<int>(v.begin(), v.end());
    };
    ints_ = {c.blocks->id,          c.local,
             to_int(b.send_counts), to_int(b.send_displs),
             to_int(b.recv_counts), to_int(b.recv_displs)};
    return ints_;
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  IntBlocks ints_;
  struct Pending {
    MPI_Request request = MPI_REQUEST_NULL;
    std::optional<std::chrono::steady_clock::time_point> done;
  };
  std::map<Ticket, Pending> pending_;  // started and not yet seen complete by test()
  Ticket next_ticket_ = 0;
  MpiFlavor flavor_;
  std::string algorithm_;
  std::optional<MpichChoice> choice_;
  bool multi_node_ = false;
  int rank_ = 0;
  int size_ = 1;
};

// Whether ranks sit on more than one node with several on some node (MPICH's "smp"
// algorithms need that hierarchy).
bool hierarchical_world() {
  MPI_Comm node = MPI_COMM_NULL;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) !=
      MPI_SUCCESS) {
    return false;
  }
  int local = 1, node_rank = 0;
  MPI_Comm_size(node, &local);
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_free(&node);
  int counts[2] = {node_rank == 0 ? 1 : 0, local};  // nodes, largest node
  int nodes = 0, largest = 0;
  MPI_Allreduce(&counts[0], &nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&counts[1], &largest, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return nodes > 1 && largest > 1;
}

class MpiBackend : public Backend {
 public:
  explicit MpiBackend(std::unique_ptr<Memory> memory) : memory_(std::move(memory)) {
    ensure_initialized();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    library_ = library_version();
    selector_ = std::make_unique<AlgorithmSelector>();
    multi_node_ = hierarchical_world();
  }
  std::string name() const override { return "mpi"; }
  std::string library() const override { return library_; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  bool supports(Collective) const override { return true; }
  bool supports(DType t) const override { return datatype(t) != MPI_DATATYPE_NULL; }
  bool supports(Collective c, ReduceOp op) const override {
    return info(c).reduces ? reduction(op) != MPI_OP_NULL : op == ReduceOp::None;
  }
  Memory& memory() override { return *memory_; }
  std::vector<std::string> algorithms(Collective c) const override {
    return selector_->algorithms(c);
  }
  std::string algorithms_unavailable() const override { return selector_->unavailable(); }
  Opened open(Collective c, const std::string& algorithm) override {
    if (algorithm != "default") {
      auto names = selector_->algorithms(c);
      if (std::find(names.begin(), names.end(), algorithm) == names.end()) {
        return {nullptr,
                selector_->unavailable().empty() ? "no such algorithm" : selector_->unavailable()};
      }
    }
    MPI_Comm comm = selector_->duplicate_for(c, algorithm);
    return {std::make_shared<MpiCommunicator>(comm, selector_->flavor(), algorithm,
                                              selector_->mpich_choice(c, algorithm), multi_node_),
            ""};
  }

 private:
  std::unique_ptr<Memory> memory_;
  std::unique_ptr<AlgorithmSelector> selector_;
  bool multi_node_ = false;
  std::string library_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

std::unique_ptr<Backend> make_backend(std::unique_ptr<Memory> memory) {
  return std::make_unique<MpiBackend>(std::move(memory));
}

}  // namespace cb::mpi
