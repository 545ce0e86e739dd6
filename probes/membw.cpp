#include "probes/membw.hpp"

#include <fmt/format.h>
#include <numa.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include <thread>

#include "common/error.hpp"
#include "common/host_name.hpp"
#include "common/schema.hpp"
#include "common/text_table.hpp"
#include "common/units.hpp"
#include "probes/topology.hpp"

namespace cb {

namespace {

using Clock = std::chrono::steady_clock;

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

// Buffers on one memory node (or anywhere when libnuma is absent), 2 MiB aligned.
class NodeBuffer {
 public:
  NodeBuffer(std::size_t bytes, int node, bool bound) : bytes_(bytes), bound_(bound) {
    if (bound_) {
      p_ = numa_alloc_onnode(bytes_, node);
    } else if (posix_memalign(&p_, 2u << 20, bytes_) != 0) {
      p_ = nullptr;
    }
    if (!p_)
      usage_error("cannot allocate {} on memory node {}: try a smaller --size", format_size(bytes_),
                  node);
  }
  ~NodeBuffer() { bound_ ? numa_free(p_, bytes_) : std::free(p_); }
  NodeBuffer(const NodeBuffer&) = delete;
  NodeBuffer& operator=(const NodeBuffer&) = delete;
  char* data() const { return static_cast<char*>(p_); }

 private:
  void* p_ = nullptr;
  std::size_t bytes_;
  bool bound_;
};

// One kernel, one node pair: `cpus.size()` threads, each pinned to one CPU and owning one
// slice; a repeat's time runs from the earliest start to the latest finish.
MembwCell measure_pair(MemKernel kernel, const std::vector<int>& cpus, char* dst, char* src,
                       std::size_t bytes, int repeats) {
  const std::size_t n = cpus.size();
  const std::size_t slice = bytes / n / 256 * 256;
  std::vector<Clock::time_point> start(n), end(n);
  std::vector<double> seconds;
  std::atomic<std::uint64_t> sink{0};
  std::barrier sync(static_cast<std::ptrdiff_t>(n), [&]() noexcept {
    if (start[0] == Clock::time_point{}) return;
    auto first = *std::min_element(start.begin(), start.end());
    auto last = *std::max_element(end.begin(), end.end());
    seconds.push_back(std::chrono::duration<double>(last - first).count());
    std::fill(start.begin(), start.end(), Clock::time_point{});
  });
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < n; ++t) {
    threads.emplace_back([&, t] {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpus[t], &set);
      pthread_setaffinity_np(pthread_self(), sizeof set, &set);
      char* d = dst + t * slice;
      char* s = src + t * slice;
      // Fault the pages in from this thread, then one untimed pass.
      std::memset(d, 0, slice);
      if (s != d) std::memset(s, 1, slice);
      std::uint64_t acc = run_mem_kernel(kernel, d, s, slice);
      sync.arrive_and_wait();
      for (int r = 0; r < repeats; ++r) {
        sync.arrive_and_wait();
        start[t] = Clock::now();
        acc += run_mem_kernel(kernel, d, s, slice);
        end[t] = Clock::now();
        sync.arrive_and_wait();
      }
      sink += acc;
    });
  }
  for (auto& th : threads) th.join();
  std::sort(seconds.begin(), seconds.end());
  MembwCell cell;
  cell.threads = static_cast<int>(n);
  const double moved = static_cast<double>(slice * n);
  auto gbps = [&](double s) { return s > 0 ? moved / s / 1e9 : 0.0; };
  std::size_t m = seconds.size();
  double median = m % 2 ? seconds[m / 2] : (seconds[m / 2 - 1] + seconds[m / 2]) / 2;
  cell.median_GBps = gbps(median);
  cell.max_GBps = gbps(seconds.front());
  cell.min_GBps = gbps(seconds.back());
  if (sink.load() == 0x5eed) std::fputc(' ', stderr);  // keeps the reads alive
  return cell;
}

}  // namespace

std::string kernel_name(MemKernel k) {
  switch (k) {
    case MemKernel::Read:
      return "read";
    case MemKernel::Write:
      return "write";
    case MemKernel::Copy:
      return "copy";
    case MemKernel::Memcpy:
      return "memcpy";
  }
  return "?";
}

MembwResult measure_membw(const MembwOptions& options) {
  MembwResult r;
  r.options = options;
  r.host = host_name();
  r.isa = membw_isa();
  std::vector<int> allowed = allowed_cpus();
  std::vector<std::vector<int>> node_cpus;
  r.numa_bound = numa_available() >= 0;
  if (r.numa_bound) {
    int max_node = numa_max_node();
    bitmask* mask = numa_allocate_cpumask();
    for (int node = 0; node <= max_node; ++node) {
      long long free_bytes = 0;
      if (numa_bitmask_isbitset(numa_all_nodes_ptr, static_cast<unsigned>(node)) &&
          numa_node_size64(node, &free_bytes) > 0) {
        r.memory_nodes.push_back(node);
      }
      if (numa_node_to_cpus(node, mask) != 0) continue;
      std::vector<int> cpus;
      for (int c : allowed) {
        if (numa_bitmask_isbitset(mask, static_cast<unsigned>(c))) cpus.push_back(c);
      }
      if (!cpus.empty()) {
        r.cpu_nodes.push_back(node);
        node_cpus.push_back(cpus);
      }
    }
    numa_free_cpumask(mask);
  }
  if (r.cpu_nodes.empty() || r.memory_nodes.empty()) {
    r.numa_bound = false;
    r.cpu_nodes = {0};
    r.memory_nodes = {0};
    node_cpus = {allowed};
  }
  if (options.bytes < 256 * 64)
    usage_error("--size {} is too small: expected at least 16K", options.bytes);
  for (MemKernel k : options.kernels) r.kernels.push_back({k, {}});
  for (int mem : r.memory_nodes) {
    bool copies = std::any_of(options.kernels.begin(), options.kernels.end(), [](MemKernel k) {
      return k == MemKernel::Copy || k == MemKernel::Memcpy;
    });
    NodeBuffer a(options.bytes, mem, r.numa_bound);
    std::unique_ptr<NodeBuffer> b;
    if (copies) b = std::make_unique<NodeBuffer>(options.bytes, mem, r.numa_bound);
    for (std::size_t ci = 0; ci < r.cpu_nodes.size(); ++ci) {
      std::vector<int> cpus = node_cpus[ci];
      std::size_t want =
          options.threads > 0 ? static_cast<std::size_t>(options.threads) : cpus.size();
      std::vector<int> pinned;
      for (std::size_t t = 0; t < want; ++t) pinned.push_back(cpus[t % cpus.size()]);
      for (auto& [kernel, cells] : r.kernels) {
        // read and write touch one buffer; copy reads the first and writes the second.
        char* src = a.data();
        char* dst =
            b && (kernel == MemKernel::Copy || kernel == MemKernel::Memcpy) ? b->data() : a.data();
        MembwCell cell = measure_pair(kernel, pinned, dst, src, options.bytes, options.repeats);
        cell.cpu_node = r.cpu_nodes[ci];
        cell.memory_node = mem;
        cells.push_back(cell);
      }
    }
  }
  // Cells were measured memory-node-major (one allocation per node); present them cpu-major.
  for (auto& [kernel, cells] : r.kernels) {
    std::stable_sort(cells.begin(), cells.end(), [](const MembwCell& x, const MembwCell& y) {
      return std::tie(x.cpu_node, x.memory_node) < std::tie(y.cpu_node, y.memory_node);
    });
  }
  return r;
}

nlohmann::json membw_to_json(const MembwResult& r) {
  nlohmann::json kernels = nlohmann::json::object();
  for (const auto& [kernel, cells] : r.kernels) {
    nlohmann::json matrix = nlohmann::json::array();
    nlohmann::json detail = nlohmann::json::array();
    for (int c : r.cpu_nodes) {
      nlohmann::json row = nlohmann::json::array();
      for (int m : r.memory_nodes) {
        auto it = std::find_if(cells.begin(), cells.end(), [&](const MembwCell& x) {
          return x.cpu_node == c && x.memory_node == m;
        });
        row.push_back(it == cells.end() ? nlohmann::json(nullptr)
                                        : nlohmann::json(it->median_GBps));
      }
      matrix.push_back(row);
    }
    for (const auto& x : cells) {
      detail.push_back({{"cpu_node", x.cpu_node},
                        {"memory_node", x.memory_node},
                        {"threads", x.threads},
                        {"GBps", x.median_GBps},
                        {"min_GBps", x.min_GBps},
                        {"max_GBps", x.max_GBps}});
    }
    kernels[kernel_name(kernel)] = {{"GBps", matrix}, {"cells", detail}};
  }
  return {{"schema", kMembwSchema},
          {"host", r.host},
          {"isa", r.isa},
          {"numa_bound", r.numa_bound},
          {"bytes", r.options.bytes},
          {"repeats", r.options.repeats},
          {"cpu_nodes", r.cpu_nodes},
          {"memory_nodes", r.memory_nodes},
          {"kernels", kernels}};
}

void print_membw(const MembwResult& r, std::ostream& out) {
  out << fmt::format(
      "Memory bandwidth on {}: GB/s (1 GB = 1e9 bytes), {} per buffer, median of {}, {} "
      "kernels{}\n",
      r.host, format_size(r.options.bytes), r.options.repeats, r.isa,
      r.numa_bound ? "" : " (libnuma unavailable or no NUMA: one node, memory not bound)");
  for (const auto& [kernel, cells] : r.kernels) {
    out << "\n" << kernel_name(kernel) << "\n";
    TextTable t;
    std::vector<std::string> header{"cpu node \\ memory node"};
    for (int m : r.memory_nodes) header.push_back(std::to_string(m));
    header.push_back("threads");
    std::vector<TextTable::Align> align(header.size(), TextTable::Align::Right);
    align[0] = TextTable::Align::Left;
    t.set_header(header, align);
    for (int c : r.cpu_nodes) {
      std::vector<std::string> row{std::to_string(c)};
      int threads = 0;
      for (int m : r.memory_nodes) {
        auto it = std::find_if(cells.begin(), cells.end(), [&](const MembwCell& x) {
          return x.cpu_node == c && x.memory_node == m;
        });
        row.push_back(it == cells.end() ? "-" : fmt::format("{:.2f}", it->median_GBps));
        if (it != cells.end()) threads = it->threads;
      }
      row.push_back(std::to_string(threads));
      t.add_row(row);
    }
    t.print(out, "  ");
  }
}

}  // namespace cb
