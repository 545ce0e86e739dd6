// The bare MPI yardstick's loop: back-to-back MPI_Allreduce on float/sum over `comm`, out of
// place, timed as a whole with MPI_Wtime after a barrier (like nccl-tests' host timing).
#pragma once

#include <mpi.h>

namespace cb::bench {

// Seconds for `iters` iterations, the slowest rank's.
inline double bare_allreduce_seconds(MPI_Comm comm, const float* send, float* recv, int count,
                                     long iters) {
  MPI_Barrier(comm);
  const double t0 = MPI_Wtime();
  for (long i = 0; i < iters; ++i) MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, comm);
  double t = MPI_Wtime() - t0;
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm);
  return t;
}

}  // namespace cb::bench
