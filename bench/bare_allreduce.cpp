// The MPI yardstick: a bare back-to-back MPI_Allreduce loop on float/sum, timed with MPI_Wtime
// around the whole loop (like nccl-tests' host timing). Per size it prints
// "bytes time_us busbw_GBps iters p50_us share_above_10x_p50 marked_time_us": time_us is the
// slowest rank's mean; the last three come from a second loop of the same length with a
// time-stamp-counter read after each iteration (per-iteration samples, each the max over ranks;
// marked_time_us is that loop's mean, so marked_time_us - time_us is what the clock read costs).
// Usage: bare_allreduce BYTES [BYTES...] [--min-time SECONDS]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bare_mpi_loop.hpp"
#include "bench/host_floats.hpp"
#include "collectives/engine/stats.hpp"
#include "collectives/engine/timing_diagnostics.hpp"
#include "core/timer.hpp"

namespace {

double timed_loop(float* send, float* recv, int count, long iters) {
  return cb::bench::bare_allreduce_seconds(MPI_COMM_WORLD, send, recv, count, iters);
}

// Per-iteration microseconds, each the max over ranks (commbench's own time-stamp timer).
std::vector<double> sampled_loop(float* send, float* recv, int count, long iters, double* mean_us) {
  auto timer = cb::make_host_timer();
  timer->reserve(static_cast<std::size_t>(iters));
  MPI_Barrier(MPI_COMM_WORLD);
  timer->start();
  for (long i = 0; i < iters; ++i) {
    MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    timer->mark();
  }
  timer->stop();
  *mean_us = timer->elapsed_us() / static_cast<double>(iters);
  MPI_Allreduce(MPI_IN_PLACE, mean_us, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  std::vector<double> us = timer->samples_us();
  MPI_Allreduce(MPI_IN_PLACE, us.data(), static_cast<int>(us.size()), MPI_DOUBLE, MPI_MAX,
                MPI_COMM_WORLD);
  return us;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double min_time = 0.05;
  std::vector<long> sizes;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--min-time") == 0 && i + 1 < argc) {
      min_time = std::atof(argv[++i]);
    } else {
      sizes.push_back(std::atol(argv[i]));
    }
  }
  for (long bytes : sizes) {
    int count = static_cast<int>(std::max(1L, bytes / 4));
    cb::bench::HostFloats send(count, 1.0f), recv(count, 0.0f);
    // Calibrate: double the loop until it takes a fifth of the budget, then run the budget.
    long iters = 1;
    double t = timed_loop(send.data(), recv.data(), count, iters);
    while (t < min_time / 5) {
      iters *= 2;
      t = timed_loop(send.data(), recv.data(), count, iters);
    }
    iters = std::max(1L, static_cast<long>(iters * (min_time / std::max(t, 1e-9))));
    t = timed_loop(send.data(), recv.data(), count, iters);
    double marked_us = 0;
    std::vector<double> samples = sampled_loop(send.data(), recv.data(), count, iters, &marked_us);
    double us = t / static_cast<double>(iters) * 1e6;
    double busbw = static_cast<double>(count) * 4 / us / 1e3 * 2.0 * (size - 1) / size;
    if (rank == 0) {
      std::printf("%ld %.6g %.6g %ld %.6g %.6g %.6g\n", static_cast<long>(count) * 4, us, busbw,
                  iters, cb::summarize(samples).p50, cb::share_above_median_multiple(samples, 10),
                  marked_us);
    }
  }
  MPI_Finalize();
  return 0;
}
