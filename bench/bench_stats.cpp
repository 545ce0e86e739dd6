// Statistics over per-iteration samples: run once per case on up to max_iters samples.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "collectives/engine/stats.hpp"

namespace {

std::vector<double> samples(std::size_t n) {
  std::mt19937 rng(42);
  std::lognormal_distribution<double> d(0.0, 0.3);
  std::vector<double> s(n);
  for (auto& v : s) v = d(rng);
  return s;
}

void BM_Summarize(benchmark::State& state) {
  auto s = samples(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(cb::summarize(s));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}

void BM_RelativeStandardError(benchmark::State& state) {
  auto s = samples(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(cb::relative_standard_error(s));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}

BENCHMARK(BM_Summarize)->Arg(1000)->Arg(200000);
BENCHMARK(BM_RelativeStandardError)->Arg(1000)->Arg(200000);

}  // namespace
