// MPI backend: each collective maps to its MPI call; in place uses MPI_IN_PLACE.
#include "collectives/mpi/mpi_backend.hpp"

#include <climits>

#include "collectives/mpi/mpi_runtime.hpp"
#include "report/error.hpp"

namespace cb::mpi {

namespace {

MPI_Datatype datatype(DType t) {
  switch (t) {
    case DType::Int8: return MPI_INT8_T;
    case DType::Uint8: return MPI_UINT8_T;
    case DType::Int32: return MPI_INT32_T;
    case DType::Uint32: return MPI_UINT32_T;
    case DType::Int64: return MPI_INT64_T;
    case DType::Uint64: return MPI_UINT64_T;
    case DType::Float: return MPI_FLOAT;
    case DType::Double: return MPI_DOUBLE;
    default: return MPI_DATATYPE_NULL;
  }
}

MPI_Op reduction(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return MPI_SUM;
    case ReduceOp::Prod: return MPI_PROD;
    case ReduceOp::Min: return MPI_MIN;
    case ReduceOp::Max: return MPI_MAX;
    default: return MPI_OP_NULL;
  }
}

class MpiCommunicator : public Communicator {
 public:
  MpiCommunicator() {
    check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
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
        rc = MPI_Reduce_scatter_block(in ? MPI_IN_PLACE : c.send, buf, n, t, reduction(c.op),
                                      comm_);
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
                : MPI_Sendrecv(c.send, n, t, next, 0, buf, n, t, prev, 0, comm_,
                               MPI_STATUS_IGNORE);
        break;
      }
      case Collective::Barrier: rc = MPI_Barrier(comm_); break;
    }
    if (rc != MPI_SUCCESS) check(rc, std::string(name(c.collective)).c_str());
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

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
};

class MpiBackend : public Backend {
 public:
  MpiBackend() : memory_(make_host_memory()) {
    ensure_initialized();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    library_ = library_version();
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
  Opened open(Collective, const std::string& algorithm) override {
    if (algorithm != "default") return {nullptr, "no such algorithm"};
    if (!world_) world_ = std::make_shared<MpiCommunicator>();
    return {world_, ""};
  }

 private:
  std::unique_ptr<Memory> memory_;
  std::shared_ptr<MpiCommunicator> world_;
  std::string library_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

std::unique_ptr<Backend> make_backend() { return std::make_unique<MpiBackend>(); }

}  // namespace cb::mpi
