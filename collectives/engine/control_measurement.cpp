#include "collectives/engine/control_measurement.hpp"

#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "collectives/backend.hpp"
#include "common/median.hpp"

namespace cb {

namespace {

using Clock = std::chrono::steady_clock;

struct alignas(64) Line {
  std::atomic<long> value{0};
};

bool pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

// The first two CPUs of the machine a thread may be pinned to (a rank bound to one core may still
// place its threads on others of its cpuset); -1 where there are fewer.
std::pair<int, int> two_cpus() {
  int found[2] = {-1, -1};
  int n = 0;
  const int cpus = static_cast<int>(std::thread::hardware_concurrency());
  std::thread probe([&] {
    for (int c = 0; c < std::max(cpus, 2) && c < CPU_SETSIZE && n < 2; ++c) {
      if (pin_to(c)) found[n++] = c;
    }
  });
  probe.join();
  return {found[0], found[1]};
}

}  // namespace

double pingpong_round_trip_ns(int trips, int windows, double budget_ms) {
  static const std::pair<int, int> cpus = two_cpus();
  Line line;
  const long stop = -1;
  std::vector<double> means;
  std::thread pong([&] {
    if (cpus.second >= 0) pin_to(cpus.second);
    for (long k = 0;; ++k) {
      long v;
      while ((v = line.value.load(std::memory_order_acquire)) != 2 * k + 1) {
        if (v == stop) return;
      }
      line.value.store(2 * k + 2, std::memory_order_release);
    }
  });
  std::thread ping([&] {
    if (cpus.first >= 0) pin_to(cpus.first);
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double, std::milli>(budget_ms));
    long k = 0;
    bool late = false;
    for (int w = 0; w < windows && !late; ++w) {
      const auto t0 = Clock::now();
      int done = 0;
      for (; done < trips; ++done, ++k) {
        line.value.store(2 * k + 1, std::memory_order_release);
        while (line.value.load(std::memory_order_acquire) != 2 * k + 2) {
        }
        if ((done & 31) == 31 && Clock::now() > deadline) {
          late = true;
          ++done;
          ++k;
          break;
        }
      }
      std::chrono::duration<double, std::nano> d = Clock::now() - t0;
      // A window cut short still counts when nothing else was measured.
      if (done == trips || means.empty()) means.push_back(d.count() / std::max(done, 1));
    }
    line.value.store(stop, std::memory_order_release);
  });
  ping.join();
  pong.join();
  return median_of(means);
}

double fixed_compute_us() {
  std::vector<double> us;
  for (int rep = 0; rep < 5; ++rep) {
    const auto t0 = Clock::now();
    std::uint64_t x = 88172645463325252ull + static_cast<std::uint64_t>(rep);
    for (int i = 0; i < 100000; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
    std::chrono::duration<double, std::micro> d = Clock::now() - t0;
    volatile std::uint64_t keep = x;  // the chain must be computed
    (void)keep;
    us.push_back(d.count());
  }
  return median_of(us);
}

ControlSample measure_control(const std::string& at) {
  ControlSample s;
  s.at = at;
  // The smaller of two measurements: the first after a quiet spell (the start of a launch, a
  // barrier) can find its threads' cores asleep, which says nothing about the host's mode.
  s.pingpong_ns = std::min(pingpong_round_trip_ns(), pingpong_round_trip_ns());
  s.compute_us = std::min(fixed_compute_us(), fixed_compute_us());
  return s;
}

namespace {

// The "cpu" line of /proc/stat: steal ticks and all ticks.
std::pair<std::uint64_t, std::uint64_t> cpu_ticks() {
  std::ifstream in("/proc/stat");
  std::string label;
  in >> label;
  if (label != "cpu") return {0, 0};
  std::uint64_t v[8] = {}, total = 0;
  for (auto& x : v) {
    if (!(in >> x)) break;
    total += x;
  }
  return {v[7], total};  // user nice system idle iowait irq softirq steal
}

}  // namespace

void HostLoad::start() {
  std::tie(steal_, total_) = cpu_ticks();
  std::ifstream in("/proc/loadavg");
  if (!(in >> load_)) load_ = 0;
}

void HostLoad::finish(LaunchControl& into) const {
  auto [steal, total] = cpu_ticks();
  into.load_average = load_;
  into.steal_fraction =
      total > total_ ? static_cast<double>(steal - steal_) / static_cast<double>(total - total_)
                     : 0;
}

void sample_control_collectively(Control& control, const std::string& at, LaunchControl& into) {
  control.quiet_barrier();
  if (control.rank() == 0) into.samples.push_back(measure_control(at));
  control.quiet_barrier();
}

std::string control_moved(const LaunchControl& c) {
  if (c.samples.size() < 2) return {};
  std::vector<std::string> what;
  auto describe = [&](const char* name, double moved, double tolerance, auto figure,
                      const char* unit) {
    if (moved <= tolerance) return;
    double lo = 1e300, hi = 0;
    std::string at_lo, at_hi;
    for (const auto& s : c.samples) {
      double v = figure(s);
      if (v <= 0) continue;
      if (v < lo) lo = v, at_lo = s.at;
      if (v > hi) hi = v, at_hi = s.at;
    }
    what.push_back(fmt::format("{} {:.0f} {} at the {}, {:.0f} {} at the {} ({:.1f}x)", name, lo,
                               unit, at_lo, hi, unit, at_hi, moved));
  };
  describe(
      "core-to-core round trip", c.pingpong_moved(), kPingpongTolerance,
      [](const ControlSample& s) { return s.pingpong_ns; }, "ns");
  describe(
      "fixed compute loop", c.compute_moved(), kComputeTolerance,
      [](const ControlSample& s) { return s.compute_us; }, "us");
  if (what.empty()) return {};
  std::string s;
  for (const auto& w : what) s += (s.empty() ? "" : "; ") + w;
  return s;
}

std::uint64_t case_order_seed() {
  const char* v = std::getenv("COMMBENCH_CASE_ORDER_SEED");
  return v ? std::strtoull(v, nullptr, 10) : 0;
}

}  // namespace cb
