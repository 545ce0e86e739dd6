// GPU tests (ctest label gpu): device memory and the validation kernels against the host
// implementation, the CUDA-event timer, and one NCCL communicator driven by the runner. Each
// test is skipped when no CUDA device is visible.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstring>
#include <vector>

#include "collectives/backends/mpi/mpi_runtime.hpp"
#include "collectives/backends/nccl/cuda_device.hpp"
#include "collectives/backends/nccl/event_timer.hpp"
#include "collectives/backends/nccl/nccl_backend.hpp"
#include "collectives/engine/runner.hpp"
#include "core/watchdog.hpp"

namespace cb {
namespace {

#define SKIP_WITHOUT_GPU()                                          \
  do {                                                              \
    if (std::string why = cuda::no_device_reason(); !why.empty()) { \
      GTEST_SKIP() << why;                                          \
    }                                                               \
  } while (0)

std::vector<std::byte> to_host(const void* device, std::size_t bytes) {
  std::vector<std::byte> out(bytes);
  EXPECT_EQ(cudaMemcpy(out.data(), device, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  return out;
}

// Fill and check on the GPU give exactly what the host versions give, at every element size,
// misaligned starts, odd lengths and any offset into the period.
TEST(DeviceMemory, FillAndCheckMatchTheHost) {
  SKIP_WITHOUT_GPU();
  auto memory = cuda::make_device_memory({0});
  const std::uint64_t capacity = 3 * Pattern::kPeriod * 8 + 4096;
  void* base = memory->allocate(capacity * 8);
  for (DType t : {DType::Int8, DType::Half, DType::Float, DType::Double}) {
    const std::size_t es = info(t).size;
    Pattern pattern(t, ReduceOp::Sum, 4, 17);
    PeriodicTable table = pattern.input_table(2);
    for (std::uint64_t count : std::vector<std::uint64_t>{1, 7, 1021, 2 * 1021 + 5, capacity - 8}) {
      for (std::uint64_t shift : {0, 1, 3}) {
        for (std::uint64_t src : {0, 5, 2000}) {
          void* dst = static_cast<char*>(base) + shift * es;
          memory->fill(dst, count, table, src);
          std::vector<std::byte> want(count * es);
          fill_periodic(want.data(), count, table, src);
          ASSERT_EQ(to_host(dst, count * es), want)
              << info(t).name << " count " << count << " shift " << shift << " src " << src;
          ASSERT_EQ(memory->count_wrong(dst, count, table, src), 0u);
          // One flipped element is one wrong element; the wrong offset makes most wrong.
          memory->corrupt(static_cast<char*>(dst) + (count / 2) * es, es);
          ASSERT_EQ(memory->count_wrong(dst, count, table, src), 1u);
          if (count >= 1021) {
            EXPECT_GT(memory->count_wrong(dst, count, table, src + 1), count / 2);
          }
        }
      }
    }
    memory->poison(base, 1021 * es);
    EXPECT_EQ(memory->count_wrong(base, 1021, table, 0), 1021u);
  }
  memory->release(base);
}

TEST(EventTimer, SamplesAddUpToTheElapsedTime) {
  SKIP_WITHOUT_GPU();
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  void* buf = nullptr;
  const std::size_t bytes = 64 << 20;
  ASSERT_EQ(cudaMalloc(&buf, bytes), cudaSuccess);
  auto pool = std::make_shared<cuda::EventPool>(std::vector<cuda::TimedStream>{{0, stream}});
  auto timer = cuda::make_event_timer(pool);
  timer->reserve(5);
  timer->start();
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(cudaMemsetAsync(buf, i, bytes, stream), cudaSuccess);
    timer->mark();
  }
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  timer->stop();
  auto samples = timer->samples_us();
  ASSERT_EQ(samples.size(), 5u);
  double sum = 0;
  for (double s : samples) {
    EXPECT_GT(s, 0.0);
    sum += s;
  }
  EXPECT_NEAR(sum, timer->elapsed_us(), 0.01 * timer->elapsed_us() + 2.0);
  cudaFree(buf);
  cudaStreamDestroy(stream);
}

// One rank, one GPU: the backend, communicator, device memory, GPU validation and event timer
// together through the runner, with a wrong element injected to prove the check can fail.
TEST(NcclBackend, OneRankAllreduceValidatesOnTheGpu) {
  SKIP_WITHOUT_GPU();
  auto control = mpi::make_control();
  Watchdog watchdog(120, true);
  BackendOptions o;
  o.control = control.get();
  o.watchdog = &watchdog;
  o.memory = MemoryKind::Device;
  o.report_choice = true;
  if (std::string why = nccl::unavailable_reason(o); !why.empty()) GTEST_SKIP() << why;
  auto backend = nccl::make_backend(o);
  ASSERT_EQ(backend->memory().kind(), MemoryKind::Device);
  SweepOptions sweep;
  sweep.collectives = {Collective::AllReduce};
  sweep.min_bytes = 8;
  sweep.max_bytes = 4 << 20;
  sweep.step_factor = 64;
  std::vector<std::string> notes;
  auto cases = plan_cases(*backend, sweep, backend->size(), notes);
  ASSERT_FALSE(cases.empty());
  RunnerOptions ro;
  ro.iters = 20;
  ro.warmup = 2;
  Runner runner(*backend, *control, watchdog, ro, cases);
  Opened opened = backend->open(Collective::AllReduce, "default");
  ASSERT_TRUE(opened.comm) << opened.skipped_reason;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    Measurement m = runner.run(*opened.comm, cases[i], i);
    ASSERT_TRUE(m.wrong.has_value());
    EXPECT_EQ(*m.wrong, 0u) << describe(cases[i]);
    EXPECT_GT(m.time_us, 0.0);
    EXPECT_EQ(m.iters, 20u);
  }
  // NCCL 2.24+ prints its choice at INFO level ("default (RING/LL, 1 ch)"); a single rank
  // copies without choosing, so the answer may be empty, but the extra call must succeed.
  std::string chosen = opened.comm->describe_choice();
  EXPECT_TRUE(chosen.empty() || chosen.rfind("default (", 0) == 0) << chosen;
}

}  // namespace
}  // namespace cb
