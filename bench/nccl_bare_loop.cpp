// A bare back-to-back NCCL loop: the yardstick bench/nccl_vs_bare.py holds `commbench run -B
// nccl` against. One process per GPU under mpirun (or --gpus N GPUs in one process), one NCCL
// call per iteration on one stream, the whole batch timed with two CUDA events per GPU, as
// nccl-tests does. Linked against libnccl directly; prints the loaded library on stderr so the
// comparison can point commbench at the same file.
//
//   mpirun -np 8 nccl_bare_loop -c allreduce -b 1M -e 1G -f 2 -n 50 -w 10 [--blocking 0|1]
//
// CSV on stdout (rank 0): collective,bytes,count,iters,time_us,algbw_GBps,busbw_GBps
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <mpi.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

#define CHECK_CUDA(call)                                        \
  do {                                                          \
    cudaError_t e_ = (call);                                    \
    if (e_ != cudaSuccess) fail(#call, cudaGetErrorString(e_)); \
  } while (0)

[[noreturn]] void fail(const char* what, const char* why) {
  std::fprintf(stderr, "nccl_bare_loop: %s: %s\n", what, why);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

struct Options {
  std::string collective = "allreduce";
  std::size_t min_bytes = 8, max_bytes = 1 << 30;
  double factor = 2;
  int iters = 50, warmup = 10, gpus = 1, blocking = 1;
};

std::size_t parse_size(const char* s) {
  char* end = nullptr;
  double v = std::strtod(s, &end);
  switch (*end) {
    case 'K':
    case 'k':
      v *= 1024;
      break;
    case 'M':
    case 'm':
      v *= 1024 * 1024;
      break;
    case 'G':
    case 'g':
      v *= 1024.0 * 1024 * 1024;
      break;
    default:
      break;
  }
  return static_cast<std::size_t>(v);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    const char* v = argv[i + 1];
    if (k == "-c")
      o.collective = v;
    else if (k == "-b")
      o.min_bytes = parse_size(v);
    else if (k == "-e")
      o.max_bytes = parse_size(v);
    else if (k == "-f")
      o.factor = std::atof(v);
    else if (k == "-n")
      o.iters = std::atoi(v);
    else if (k == "-w")
      o.warmup = std::atoi(v);
    else if (k == "-g")
      o.gpus = std::atoi(v);
    else if (k == "--blocking")
      o.blocking = std::atoi(v);
    else
      fail("unknown option", argv[i]);
  }
  return o;
}

// Blocks per rank: collectives whose buffers hold one block per rank (nccl-tests sizes).
int blocks(const std::string& c, int nranks) {
  return c == "allgather" || c == "reduce_scatter" || c == "alltoall" ? nranks : 1;
}

double bus_factor(const std::string& c, int n) {
  if (c == "allreduce") return 2.0 * (n - 1) / n;
  if (c == "allgather" || c == "reduce_scatter" || c == "alltoall") return double(n - 1) / n;
  return 1.0;
}

void check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess && r != ncclInProgress) fail(what, ncclGetErrorString(r));
}

// Non-blocking communicators return ncclInProgress until NCCL has taken the call.
void settle(const std::vector<ncclComm_t>& comms) {
  for (ncclComm_t c : comms) {
    ncclResult_t state = ncclInProgress;
    do {
      check(ncclCommGetAsyncError(c, &state), "ncclCommGetAsyncError");
    } while (state == ncclInProgress);
    if (state != ncclSuccess) fail("asynchronous error", ncclGetErrorString(state));
  }
}

void issue(const std::string& c, const void* send, void* recv, std::size_t count, int rank,
           int nranks, ncclComm_t comm, cudaStream_t s) {
  const std::size_t block = count * sizeof(float);
  if (c == "allreduce") {
    check(ncclAllReduce(send, recv, count, ncclFloat, ncclSum, comm, s), "ncclAllReduce");
  } else if (c == "allgather") {
    check(ncclAllGather(send, recv, count, ncclFloat, comm, s), "ncclAllGather");
  } else if (c == "reduce_scatter") {
    check(ncclReduceScatter(send, recv, count, ncclFloat, ncclSum, comm, s), "ncclReduceScatter");
  } else if (c == "broadcast") {
    check(ncclBroadcast(send, recv, count, ncclFloat, 0, comm, s), "ncclBroadcast");
  } else if (c == "reduce") {
    check(ncclReduce(send, recv, count, ncclFloat, ncclSum, 0, comm, s), "ncclReduce");
  } else if (c == "alltoall") {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
    check(ncclAlltoAll(send, recv, count, ncclFloat, comm, s), "ncclAlltoAll");
#else
    check(ncclGroupStart(), "ncclGroupStart");
    for (int r = 0; r < nranks; ++r) {
      check(ncclSend(static_cast<const char*>(send) + r * block, count, ncclFloat, r, comm, s),
            "ncclSend");
      check(ncclRecv(static_cast<char*>(recv) + r * block, count, ncclFloat, r, comm, s),
            "ncclRecv");
    }
    check(ncclGroupEnd(), "ncclGroupEnd");
#endif
  } else {
    fail("unknown collective", c.c_str());
  }
  (void)rank;  // unused where NCCL has native alltoall
  (void)nranks;
  (void)block;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int prank = 0, nprocs = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &prank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, prank, MPI_INFO_NULL, &node);
  int local = 0;
  MPI_Comm_rank(node, &local);
  Options o = parse(argc, argv);
  const int g = o.gpus, nranks = nprocs * g;

  if (prank == 0) {
    int v = 0;
    ncclGetVersion(&v);
    Dl_info info{};
    dladdr(reinterpret_cast<void*>(&ncclGetVersion), &info);
    std::fprintf(stderr, "# nccl %d %s\n", v, info.dli_fname ? info.dli_fname : "?");
  }
  ncclUniqueId id;
  if (prank == 0) check(ncclGetUniqueId(&id), "ncclGetUniqueId");
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);

  std::vector<ncclComm_t> comms(g);
  std::vector<cudaStream_t> streams(g);
  std::vector<void*> sends(g), recvs(g);
  std::vector<cudaEvent_t> start(g), stop(g);
  const std::size_t buffer = o.max_bytes + 4096;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = o.blocking;
  check(ncclGroupStart(), "ncclGroupStart");
  for (int i = 0; i < g; ++i) {
    CHECK_CUDA(cudaSetDevice(local * g + i));
    CHECK_CUDA(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking));
    CHECK_CUDA(cudaMalloc(&sends[i], buffer));
    CHECK_CUDA(cudaMalloc(&recvs[i], buffer));
    CHECK_CUDA(cudaMemset(sends[i], 0, buffer));
    CHECK_CUDA(cudaEventCreate(&start[i]));
    CHECK_CUDA(cudaEventCreate(&stop[i]));
    check(ncclCommInitRankConfig(&comms[i], nranks, id, prank * g + i, &config),
          "ncclCommInitRankConfig");
  }
  check(ncclGroupEnd(), "ncclGroupEnd");
  settle(comms);

  if (prank == 0) std::printf("collective,bytes,count,iters,time_us,algbw_GBps,busbw_GBps\n");
  for (double s = static_cast<double>(o.min_bytes); s <= o.max_bytes * (1 + 1e-12); s *= o.factor) {
    const std::size_t count =
        static_cast<std::size_t>(s) / (sizeof(float) * blocks(o.collective, nranks));
    if (count == 0) continue;
    const std::size_t bytes = count * sizeof(float) * blocks(o.collective, nranks);
    auto one = [&] {
      if (g > 1) check(ncclGroupStart(), "ncclGroupStart");
      for (int i = 0; i < g; ++i) {
        issue(o.collective, sends[i], recvs[i], count, prank * g + i, nranks, comms[i], streams[i]);
      }
      if (g > 1) check(ncclGroupEnd(), "ncclGroupEnd");
      if (!o.blocking) settle(comms);
    };
    auto batch = [&](int n, bool timed) {
      // One untimed call first: the start event then waits behind real work on every rank,
      // not on an idle stream right after the host barrier (which would put the ranks' skew
      // and the first launch into the first interval), as nccl-tests' untimed operation does.
      if (timed) one();
      for (int i = 0; timed && i < g; ++i) CHECK_CUDA(cudaEventRecord(start[i], streams[i]));
      for (int it = 0; it < n; ++it) one();
      for (int i = 0; timed && i < g; ++i) CHECK_CUDA(cudaEventRecord(stop[i], streams[i]));
      for (int i = 0; i < g; ++i) CHECK_CUDA(cudaStreamSynchronize(streams[i]));
    };
    batch(o.warmup, false);
    MPI_Barrier(MPI_COMM_WORLD);
    batch(o.iters, true);
    double us = 0;
    for (int i = 0; i < g; ++i) {
      float ms = 0;
      CHECK_CUDA(cudaEventElapsedTime(&ms, start[i], stop[i]));
      us = std::max(us, ms * 1000.0 / o.iters);
    }
    MPI_Allreduce(MPI_IN_PLACE, &us, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (prank == 0) {
      const double algbw = bytes / us / 1e3;
      std::printf("%s,%zu,%zu,%d,%.3f,%.3f,%.3f\n", o.collective.c_str(), bytes, count, o.iters, us,
                  algbw, algbw * bus_factor(o.collective, nranks));
      std::fflush(stdout);
    }
  }
  for (int i = 0; i < g; ++i) ncclCommDestroy(comms[i]);
  MPI_Finalize();
  return 0;
}
