// The machine's core-to-core latency right now: two threads, pinned to two CPUs, bounce one cache
// line back and forth (no MPI, no library). Prints
//   "core_pingpong cpus A B round_trip_ns min MIN p50 P50"
// where each value is a window's mean round trip (WINDOWS windows of TRIPS round trips; min and
// median over windows: the minimum is what the CPUs can do, preemption only adds). On a virtual
// machine this moves with where the host runs the virtual CPUs (e.g. two hyper-threads of one
// core against two cores of different chiplets), which every shared-memory transport inherits;
// compare_bare.py and compare_false_alarms.py run it beside their launches to tell the modes apart.
// Usage: core_pingpong [--cpus A,B] [--windows 50] [--trips 2000]
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

struct alignas(64) Line {
  std::atomic<long> value{0};
};

bool pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  int cpu_a = -1, cpu_b = -1;
  long windows = 50, trips = 2000;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--cpus") == 0 && i + 1 < argc) {
      if (std::sscanf(argv[++i], "%d,%d", &cpu_a, &cpu_b) != 2) cpu_a = cpu_b = -2;
    } else if (std::strcmp(argv[i], "--windows") == 0 && i + 1 < argc) {
      windows = std::atol(argv[++i]);
    } else if (std::strcmp(argv[i], "--trips") == 0 && i + 1 < argc) {
      trips = std::atol(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: core_pingpong [--cpus A,B] [--windows N] [--trips N]\n");
      return 2;
    }
  }
  if (cpu_a == -1) {  // the first two CPUs this process may run on
    cpu_set_t set;
    CPU_ZERO(&set);
    sched_getaffinity(0, sizeof(set), &set);
    for (int c = 0; c < CPU_SETSIZE && cpu_b < 0; ++c) {
      if (!CPU_ISSET(c, &set)) continue;
      (cpu_a < 0 ? cpu_a : cpu_b) = c;
    }
  }
  if (cpu_a < 0 || cpu_b < 0 || cpu_a == cpu_b || windows < 1 || trips < 1) {
    std::fprintf(stderr, "core_pingpong: needs two distinct CPUs and positive counts\n");
    return 2;
  }
  Line line;
  const long total = windows * trips;
  bool pinned_b = true;
  std::thread pong([&] {
    pinned_b = pin(cpu_b);
    for (long k = 0; k < total; ++k) {
      while (line.value.load(std::memory_order_acquire) != 2 * k + 1) {
      }
      line.value.store(2 * k + 2, std::memory_order_release);
    }
  });
  const bool pinned_a = pin(cpu_a);
  std::vector<double> ns(static_cast<std::size_t>(windows));
  long k = 0;
  for (auto& v : ns) {
    auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < trips; ++i, ++k) {
      line.value.store(2 * k + 1, std::memory_order_release);
      while (line.value.load(std::memory_order_acquire) != 2 * k + 2) {
      }
    }
    std::chrono::duration<double, std::nano> d = std::chrono::steady_clock::now() - t0;
    v = d.count() / static_cast<double>(trips);
  }
  pong.join();
  if (!pinned_a || !pinned_b) {
    std::fprintf(stderr, "core_pingpong: cannot pin to CPUs %d and %d\n", cpu_a, cpu_b);
    return 1;
  }
  std::sort(ns.begin(), ns.end());
  std::printf("core_pingpong cpus %d %d round_trip_ns min %.1f p50 %.1f\n", cpu_a, cpu_b, ns[0],
              ns[ns.size() / 2]);
  return 0;
}
