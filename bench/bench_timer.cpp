// What per-iteration timing costs: the host timer's mark() (a time-stamp-counter read and a
// store) against the same loop storing a counter instead of reading the clock.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "core/timer.hpp"

namespace {

constexpr std::size_t kBatch = 4096;

void BM_LoopStoringACounter(benchmark::State& state) {
  std::vector<std::uint64_t> marks(kBatch);
  for (auto _ : state) {
    for (std::size_t i = 0; i < kBatch; ++i) marks[i] = i;
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kBatch));
}

void BM_LoopCallingMark(benchmark::State& state) {
  auto timer = cb::make_host_timer();
  timer->reserve(kBatch);
  for (auto _ : state) {
    timer->start();
    for (std::size_t i = 0; i < kBatch; ++i) timer->mark();
    timer->stop();
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kBatch));
}

}  // namespace

BENCHMARK(BM_LoopStoringACounter);
BENCHMARK(BM_LoopCallingMark);
