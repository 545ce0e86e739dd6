// Validation fill and check throughput: these run outside timed regions but decide how long a
// validated sweep takes, so they should run at memory speed.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "collectives/validation/pattern.hpp"

namespace {

using cb::DType;
using cb::Pattern;
using cb::ReduceOp;

void BM_Fill(benchmark::State& state) {
  const std::uint64_t bytes = static_cast<std::uint64_t>(state.range(0));
  Pattern p(DType::Float, ReduceOp::Sum, 4, 7);
  std::vector<std::byte> buf(bytes);
  auto table = p.input_table(1);
  for (auto _ : state) {
    cb::fill_periodic(buf.data(), bytes / 4, table, 3);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}

void BM_Check(benchmark::State& state) {
  const std::uint64_t bytes = static_cast<std::uint64_t>(state.range(0));
  Pattern p(DType::Float, ReduceOp::Sum, 4, 7);
  std::vector<std::byte> buf(bytes);
  auto table = p.reduced_table();
  cb::fill_periodic(buf.data(), bytes / 4, table, 0);
  for (auto _ : state) {
    benchmark::DoNotOptimize(cb::count_wrong_periodic(buf.data(), bytes / 4, table, 0));
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}

// A plain memcpy and memcmp of the same size: the ceiling the fill and check should approach.
void BM_MemcpyBaseline(benchmark::State& state) {
  const std::size_t bytes = static_cast<std::size_t>(state.range(0));
  std::vector<std::byte> src(bytes, std::byte{1}), dst(bytes);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}

void BM_MemcmpBaseline(benchmark::State& state) {
  const std::size_t bytes = static_cast<std::size_t>(state.range(0));
  std::vector<std::byte> a(bytes, std::byte{1}), b(bytes, std::byte{1});
  for (auto _ : state) benchmark::DoNotOptimize(std::memcmp(a.data(), b.data(), bytes));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}

void BM_TableBuild(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  for (auto _ : state) {
    Pattern p(DType::BFloat16, ReduceOp::Sum, n, 11);
    benchmark::DoNotOptimize(p.reduced_table().data);
  }
}

BENCHMARK(BM_Fill)->Arg(64 << 10)->Arg(4 << 20)->Arg(64 << 20);
BENCHMARK(BM_MemcpyBaseline)->Arg(64 << 10)->Arg(4 << 20)->Arg(64 << 20);
BENCHMARK(BM_Check)->Arg(64 << 10)->Arg(4 << 20)->Arg(64 << 20);
BENCHMARK(BM_MemcmpBaseline)->Arg(64 << 10)->Arg(4 << 20)->Arg(64 << 20);
BENCHMARK(BM_TableBuild)->Arg(8)->Arg(1024);

}  // namespace
