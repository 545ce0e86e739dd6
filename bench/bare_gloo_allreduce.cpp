// The Gloo yardstick: a bare back-to-back gloo::allreduce loop (float, sum, out of place, the
// default algorithm) over Gloo's TCP transport on 127.0.0.1, as `commbench run -B gloo` runs it
// under its local launcher. It starts its ranks itself (fork), unbound, and they meet through a
// Gloo FileStore in a fresh directory.
//
// Per size it prints "bytes time_us busbw_GBps iters p50_us share_above_10x_p50 marked_time_us":
// time_us is the slowest rank's mean over a loop timed as a whole; the last three come from a
// second loop of the same length with a time-stamp-counter read after each iteration
// (per-iteration samples, each the max over ranks; marked_time_us is that loop's mean).
// Usage: bare_gloo_allreduce BYTES [BYTES...] [--min-time SECONDS] [--np N]
#include <gloo/allreduce.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "bench/host_floats.hpp"
#include "collectives/engine/stats.hpp"
#include "collectives/engine/timing_diagnostics.hpp"
#include "core/timer.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using ContextPtr = std::shared_ptr<::gloo::rendezvous::Context>;

void max_over_ranks(const ContextPtr& ctx, double* v, std::size_t n) {
  ::gloo::AllreduceOptions opts(ctx);
  opts.setOutput(v, n);
  opts.setReduceFunction(
      static_cast<void (*)(void*, const void*, const void*, size_t)>(&::gloo::max<double>));
  ::gloo::allreduce(opts);
}

struct Loop {
  ContextPtr ctx;
  std::unique_ptr<::gloo::AllreduceOptions> opts;
  cb::bench::HostFloats send, recv;

  Loop(ContextPtr c, std::size_t count) : ctx(std::move(c)), send(count, 1.0f), recv(count, 0.0f) {
    opts = std::make_unique<::gloo::AllreduceOptions>(ctx);
    opts->setInput(send.data(), count);
    opts->setOutput(recv.data(), count);
    opts->setReduceFunction(
        static_cast<void (*)(void*, const void*, const void*, size_t)>(&::gloo::sum<float>));
    opts->setTag(1);
  }

  // Seconds for `iters` iterations, slowest rank.
  double timed(long iters) {
    double zero = 0;
    max_over_ranks(ctx, &zero, 1);  // lines the ranks up
    auto t0 = Clock::now();
    for (long i = 0; i < iters; ++i) ::gloo::allreduce(*opts);
    double t = std::chrono::duration<double>(Clock::now() - t0).count();
    max_over_ranks(ctx, &t, 1);
    return t;
  }

  // Per-iteration microseconds, each the max over ranks (commbench's own time-stamp timer).
  std::vector<double> sampled(long iters, double* mean_us) {
    auto timer = cb::make_host_timer();
    timer->reserve(static_cast<std::size_t>(iters));
    double zero = 0;
    max_over_ranks(ctx, &zero, 1);
    timer->start();
    for (long i = 0; i < iters; ++i) {
      ::gloo::allreduce(*opts);
      timer->mark();
    }
    timer->stop();
    *mean_us = timer->elapsed_us() / static_cast<double>(iters);
    max_over_ranks(ctx, mean_us, 1);
    std::vector<double> us = timer->samples_us();
    max_over_ranks(ctx, us.data(), us.size());
    return us;
  }
};

int run_rank(int rank, int size, const std::string& dir, const std::vector<long>& sizes,
             double min_time) {
  ::gloo::transport::tcp::attr attr;
  attr.hostname = "127.0.0.1";
  attr.ai_family = AF_INET;
  auto device = ::gloo::transport::tcp::CreateDevice(attr);
  ::gloo::rendezvous::FileStore store(dir);
  auto ctx = std::make_shared<::gloo::rendezvous::Context>(rank, size);
  ctx->setTimeout(std::chrono::seconds(60));
  ctx->connectFullMesh(store, device);
  for (long bytes : sizes) {
    const std::size_t count = static_cast<std::size_t>(std::max(1L, bytes / 4));
    Loop loop(ctx, count);
    // Calibrate: double the loop until it takes a fifth of the budget, then run the budget.
    long iters = 1;
    double t = loop.timed(iters);
    while (t < min_time / 5) {
      iters *= 2;
      t = loop.timed(iters);
    }
    iters = std::max(1L, static_cast<long>(static_cast<double>(iters) * (min_time / t)));
    t = loop.timed(iters);
    double marked_us = 0;
    std::vector<double> samples = loop.sampled(iters, &marked_us);
    if (rank == 0) {
      const double us = t / static_cast<double>(iters) * 1e6;
      const double busbw = static_cast<double>(count) * 4 / us / 1e3 * 2.0 * (size - 1) / size;
      std::printf("%zu %.6g %.6g %ld %.6g %.6g %.6g\n", count * 4, us, busbw, iters,
                  cb::summarize(samples).p50, cb::share_above_median_multiple(samples, 10),
                  marked_us);
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  double min_time = 0.05;
  int np = 2;
  std::vector<long> sizes;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--min-time") == 0 && i + 1 < argc) {
      min_time = std::atof(argv[++i]);
    } else if (std::strcmp(argv[i], "--np") == 0 && i + 1 < argc) {
      np = std::atoi(argv[++i]);
    } else {
      sizes.push_back(std::atol(argv[i]));
    }
  }
  if (sizes.empty() || np < 1 || min_time <= 0) {
    std::fprintf(stderr, "usage: bare_gloo_allreduce BYTES... [--min-time S] [--np N]\n");
    return 2;
  }
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/bare-gloo-XXXXXX";
  if (!::mkdtemp(pattern.data())) {
    std::perror("mkdtemp");
    return 1;
  }
  std::vector<pid_t> children;
  for (int r = 0; r < np; ++r) {
    pid_t pid = ::fork();
    if (pid == 0) {
      int rc = 1;
      try {
        rc = run_rank(r, np, pattern, sizes, min_time);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "bare_gloo_allreduce: rank %d: %s\n", r, e.what());
      }
      std::fflush(nullptr);
      ::_exit(rc);
    }
    children.push_back(pid);
  }
  int result = 0;
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) result = 1;
  }
  std::error_code ignored;
  std::filesystem::remove_all(pattern, ignored);
  return result;
}
