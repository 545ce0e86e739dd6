// commbench's timed loop against a bare loop, in the same ranks and the same launch, taking
// turns: what the harness itself adds to time_us, with the machine's launch-to-launch changes
// (a virtual machine's CPU placement, buffer placement) cancelled because both sides share them.
//
// Each round runs a bare back-to-back MPI_Allreduce loop (float sum, out of place, on
// MPI_COMM_WORLD, timed as a whole with MPI_Wtime, slowest rank) and commbench's Runner on the
// MPI backend (its own communicator, buffers and timing, `-n ITERS -w 1000 --no-check`), in
// alternating order. Per round rank 0 prints "round bare_us commbench_us ratio"; then the median
// ratio over rounds.
// Usage: mpirun -np 2 harness_overhead [BYTES=8] [ITERS=200000] [ROUNDS=21] [dup]
// (dup: the bare loop runs on a duplicate of MPI_COMM_WORLD, as commbench does)
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "bench/bare_mpi_loop.hpp"
#include "bench/host_floats.hpp"
#include "collectives/backends/registry.hpp"
#include "collectives/engine/runner.hpp"
#include "core/watchdog.hpp"
#include "launch/start.hpp"
#include "report/launch_statistics.hpp"

namespace {

MPI_Comm bare_comm = MPI_COMM_WORLD;

double bare_us(float* send, float* recv, int count, long iters) {
  return cb::bench::bare_allreduce_seconds(bare_comm, send, recv, count, iters) /
         static_cast<double>(iters) * 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  const long bytes = argc > 1 ? std::atol(argv[1]) : 8;
  const long iters = argc > 2 ? std::atol(argv[2]) : 200000;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 21;
  const bool dup = argc > 4 && std::string(argv[4]) == "dup";
  const int count = static_cast<int>(std::max(1L, bytes / 4));

  cb::LaunchInfo launch = cb::detect_launch();
  cb::Watchdog watchdog(600, launch.rank == 0);
  std::unique_ptr<cb::Control> control = cb::make_run_control(launch, 600, {});  // MPI_Init
  cb::BackendOptions options;
  options.launch = launch;
  options.control = control.get();
  options.watchdog = &watchdog;
  options.dtypes = {cb::DType::Float};
  options.ops = {cb::ReduceOp::Sum};
  std::vector<std::unique_ptr<cb::Backend>> backends;
  cb::create_backends({"mpi"}, options, watchdog, backends);
  cb::Backend& mpi = *backends.front();

  const cb::Case c{cb::Collective::AllReduce,
                   "default",
                   cb::DType::Float,
                   cb::ReduceOp::Sum,
                   -1,
                   static_cast<std::uint64_t>(count),
                   static_cast<std::uint64_t>(count) * 4,
                   cb::Placement::Out};
  cb::RunnerOptions ro;
  ro.iters = static_cast<std::uint64_t>(iters);
  ro.warmup = 1000;
  ro.check = false;
  cb::Runner runner(mpi, *control, watchdog, ro, {c});
  cb::Opened opened = mpi.open(c.collective, c.algorithm);
  if (!opened.comm) {
    std::fprintf(stderr, "harness_overhead: %s\n", opened.skipped_reason.c_str());
    return 1;
  }
  if (dup) MPI_Comm_dup(MPI_COMM_WORLD, &bare_comm);
  cb::bench::HostFloats send(count, 1.0f), recv(count, 0.0f);
  bare_us(send.data(), recv.data(), count, 1000);  // warm-up

  std::vector<double> ratios;
  for (int r = 0; r < rounds; ++r) {
    double bare = 0, cb_us = 0;
    if (r % 2 == 0) {
      bare = bare_us(send.data(), recv.data(), count, iters);
      cb_us = runner.run(*opened.comm, c, static_cast<std::uint64_t>(r)).time_us;
    } else {
      cb_us = runner.run(*opened.comm, c, static_cast<std::uint64_t>(r)).time_us;
      bare = bare_us(send.data(), recv.data(), count, iters);
    }
    ratios.push_back(cb_us / bare);
    if (launch.rank == 0) std::printf("%d %.6g %.6g %.4f\n", r, bare, cb_us, cb_us / bare);
  }
  if (launch.rank == 0) {
    std::printf("median commbench/bare over %d rounds of %ld iterations at %ld B: %.4f\n", rounds,
                iters, static_cast<long>(count) * 4, cb::median_of(ratios));
  }
  return 0;  // destruction in reverse order: communicator, runner, backend, control channel
}
