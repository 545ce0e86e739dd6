// `probe membw`: memory bandwidth for every (CPU node, memory node) pair, with threads pinned
// to the CPU node's CPUs and buffers bound to the memory node through libnuma.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "probes/membw_kernels.hpp"

namespace cb {

struct MembwOptions {
  std::uint64_t bytes = 256ULL << 20;  // per buffer; copy uses two
  int repeats = 5;
  int threads = 0;  // per CPU node; 0 = one per CPU of the node
  std::vector<MemKernel> kernels = {MemKernel::Read, MemKernel::Write, MemKernel::Copy};
};

struct MembwCell {
  int cpu_node = 0, memory_node = 0, threads = 0;
  double median_GBps = 0, min_GBps = 0, max_GBps = 0;
};

struct MembwResult {
  std::string host;
  std::string isa;
  bool numa_bound = false;  // false: libnuma absent, one unbound node
  std::vector<int> cpu_nodes, memory_nodes;
  MembwOptions options;
  std::vector<std::pair<MemKernel, std::vector<MembwCell>>> kernels;  // cells cpu-major
};

std::string kernel_name(MemKernel k);

MembwResult measure_membw(const MembwOptions& options);

nlohmann::json membw_to_json(const MembwResult& r);
void print_membw(const MembwResult& r, std::ostream& out);

}  // namespace cb
