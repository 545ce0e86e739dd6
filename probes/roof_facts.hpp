// The hardware facts the expected-performance model (report/roof/roof.hpp) reads, per host: each
// GPU's NVLink generation and active links, its PCIe link at the trained speed and width and the
// narrowest link up to the CPU, whether peers may reach each other directly, the network ports
// and their rates, GPUDirect RDMA, and the host's memory copy bandwidth. Rates that cannot be
// read (a throttled or emulated link, a virtual NIC) are given by the user.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "probes/topology.hpp"

namespace cb {

struct RoofInputs {
  std::optional<double> link_gbps;  // --roof-link-gbps: every host's network, Gbit/s
  // --roof-host-memory: a figure in GB/s, or "measure" (this launch, not the per-boot cache).
  std::optional<double> host_memory_GBps;
  bool measure_host_memory_now = false;
  bool host_memory = true;  // false: leave host memory out (tests of the other facts)
};

// Parses the two run flags, each into `in` (nothing when empty); a usage Error naming the flag on
// a bad value.
void read_roof_link_gbps(const std::string& link_gbps, RoofInputs& in);
void read_roof_host_memory(const std::string& host_memory, RoofInputs& in);
RoofInputs parse_roof_inputs(const std::string& link_gbps, const std::string& host_memory);

// GB/s of a PCIe link: GT/s x lanes, 8b/10b below 8 GT/s, 128b/130b from 8 GT/s.
double pcie_GBps(double gts, int width);
// Per-link NVLink rate (GB/s, one direction) and generation from the compute capability, as
// NCCL caps links by SM: 7.x NVLink2 25, 8.x NVLink3 25, 9.x NVLink4 25, 10.x+ NVLink5 50.
struct NvlinkGeneration {
  int generation = 0;
  double link_GBps = 0;
};
std::optional<NvlinkGeneration> nvlink_generation(int cc_major);

// The facts of one host (commbench/roof facts: see docs). `topo` must have been probed with NVML
// where the host has GPUs. With `sys`, also the CPU caches it describes (cache_facts) and, on the
// live tree, the CPU model.
nlohmann::json roof_facts(const Topology& topo, const RoofInputs& inputs, Sysfs* sys = nullptr);

// The CPU caches of the host, every distinct data or unified cache once (a cache shared by
// several CPUs counts once): {"bytes": their sum, "text": "L1d 2 x 48 KiB, L2 2 x 1 MiB, L3 1 x
// 32 MiB"}; null when sysfs describes none. Data that fits in them is not bound by host memory.
nlohmann::json cache_facts(Sysfs& sys);

// This host's memory copy bandwidth: one thread, and every CPU together, from `probe membw`'s
// copy kernel (the fastest of its repeats: a ceiling, not a typical figure). Unless `now`, the
// highest figures measured on this host since boot, kept in a cache keyed by host and boot id
// and measured again (keeping the higher) when the last measurement is older than
// kHostMemoryRemeasureSeconds; `now`: this launch's own measurement alone.
inline constexpr double kHostMemoryRemeasureSeconds = 600;
nlohmann::json host_memory_facts(bool now);

}  // namespace cb
