#include <climits>
#include <ctime>
#include <vector>

#include "collectives/backends/mpi/mpi_algorithm_select.hpp"
#include "collectives/backends/mpi/mpi_runtime.hpp"

namespace cb::mpi {

namespace {

class MpiControl : public Control {
 public:
  MpiControl() {
    ensure_initialized();
    check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiControl() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void barrier() override {
    ControlAlgorithms automatic;  // MPICH's own choice, whatever was forced
    check(MPI_Barrier(comm_), "MPI_Barrier (control)");
  }
  void quiet_barrier() override {
    ControlAlgorithms automatic;  // MPICH's own choice, whatever was forced
    MPI_Request req;
    check(MPI_Ibarrier(comm_, &req), "MPI_Ibarrier (control)");
    int done = 0;
    while (true) {
      check(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "MPI_Test (control)");
      if (done) return;
      struct timespec pause = {0, 200000};  // 0.2 ms
      nanosleep(&pause, nullptr);
    }
  }
  void max(double* v, std::size_t n) override {
    ControlAlgorithms automatic;  // MPICH's own choice, whatever was forced
    for (std::size_t done = 0; done < n;) {
      int chunk = static_cast<int>(std::min<std::size_t>(n - done, INT_MAX / 2));
      check(MPI_Allreduce(MPI_IN_PLACE, v + done, chunk, MPI_DOUBLE, MPI_MAX, comm_),
            "MPI_Allreduce (control)");
      done += static_cast<std::size_t>(chunk);
    }
  }
  void sum(std::uint64_t* v, std::size_t n) override {
    ControlAlgorithms automatic;  // MPICH's own choice, whatever was forced
    check(MPI_Allreduce(MPI_IN_PLACE, v, static_cast<int>(n), MPI_UINT64_T, MPI_SUM, comm_),
          "MPI_Allreduce (control)");
  }
  std::vector<std::string> allgather(const std::string& mine) override {
    ControlAlgorithms automatic;  // MPICH's own choice, whatever was forced
    int len = static_cast<int>(mine.size());
    std::vector<int> lens(static_cast<std::size_t>(size_)), offs(static_cast<std::size_t>(size_));
    check(MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, comm_), "MPI_Allgather");
    int total = 0;
    for (int i = 0; i < size_; ++i) {
      offs[static_cast<std::size_t>(i)] = total;
      total += lens[static_cast<std::size_t>(i)];
    }
    std::string all(static_cast<std::size_t>(total), '\0');
    check(MPI_Allgatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), offs.data(), MPI_CHAR,
                         comm_),
          "MPI_Allgatherv");
    std::vector<std::string> out;
    for (int i = 0; i < size_; ++i) {
      out.push_back(all.substr(static_cast<std::size_t>(offs[static_cast<std::size_t>(i)]),
                               static_cast<std::size_t>(lens[static_cast<std::size_t>(i)])));
    }
    return out;
  }
  void send(int peer, const void* data, std::size_t bytes, int count) override {
    if (count == 1) {
      check(MPI_Send(data, static_cast<int>(bytes), MPI_BYTE, peer, kPointTag, comm_),
            "MPI_Send (control)");
      return;
    }
    post_all(count, "MPI_Isend (control)", [&](MPI_Request* r) {
      return MPI_Isend(data, static_cast<int>(bytes), MPI_BYTE, peer, kPointTag, comm_, r);
    });
  }
  void recv(int peer, void* data, std::size_t bytes, int count) override {
    if (count == 1) {
      check(MPI_Recv(data, static_cast<int>(bytes), MPI_BYTE, peer, kPointTag, comm_,
                     MPI_STATUS_IGNORE),
            "MPI_Recv (control)");
      return;
    }
    post_all(count, "MPI_Irecv (control)", [&](MPI_Request* r) {
      return MPI_Irecv(data, static_cast<int>(bytes), MPI_BYTE, peer, kPointTag, comm_, r);
    });
  }

 private:
  // `count` non-blocking calls from `post`, then waits for all of them.
  template <typename Post>
  static void post_all(int count, const char* what, Post post) {
    std::vector<MPI_Request> reqs(static_cast<std::size_t>(count));
    for (auto& r : reqs) check(post(&r), what);
    check(MPI_Waitall(count, reqs.data(), MPI_STATUSES_IGNORE), "MPI_Waitall (control)");
  }

  static constexpr int kPointTag = 701;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

std::unique_ptr<Control> make_control() {
  return std::make_unique<MpiControl>();
}

}  // namespace cb::mpi
