// `commbench topo`'s model: NUMA nodes, the PCI devices that matter and their links, GPUs with
// their NVLink/PCIe matrix, RDMA NICs and netdevs, GPUDirect RDMA, IOMMU groups and warnings,
// read from a live /sys or a captured tree, rendered as the commbench/topology/v1 document or
// as tables.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "common/schema.hpp"
#include "probes/net.hpp"
#include "probes/nvml.hpp"
#include "probes/pci.hpp"
#include "probes/sysfs.hpp"

namespace cb {

// Facts a snapshot carries that are not in sysfs (host name, NVML's answers).
inline constexpr const char* kSnapshotFile = "commbench-snapshot.json";

struct NumaNode {
  int id = 0;
  std::vector<int> cpus;
  std::optional<std::uint64_t> memory_bytes;  // MemTotal of the node (ballooned VMs: a guess)
  std::vector<int> distances;                 // SLIT row, local = 10
};

struct GpuInfo {
  int index = 0;  // NVML index, else position in PCI order
  std::string bdf;
  std::optional<std::string> name;  // from NVML
  std::optional<std::string> uuid;
  std::optional<int> numa_node;
  std::optional<std::string>
      cpu_affinity;                // local_cpulist (NVML's CPU affinity when sysfs lacks it)
  std::optional<int> gpu_numa_id;  // NVML: GPU memory as a NUMA node
  std::optional<int> nvlinks_up, nvlinks_total;
  bool nvswitch = false;  // NVLinks go to NVSwitches
  bool from_nvml = false;
};

struct IommuGroup {
  int id = 0;
  std::optional<std::string> type;  // DMA, DMA-FQ, identity (kernels 5.11+)
  std::vector<std::string> devices;
};

struct Topology {
  std::optional<std::string> host;
  std::vector<NumaNode> numa;
  std::vector<PciDevice> pci;           // every device, for paths
  std::vector<std::string> pci_listed;  // the ones that matter, in tree order
  std::vector<GpuInfo> gpus;
  std::vector<std::vector<std::string>> gpu_matrix;  // X, NV#, PIX, PXB, PHB, NODE, SYS
  std::vector<RdmaNic> nics;
  std::vector<std::vector<std::string>> gpu_nic_matrix;  // rows GPUs, columns NICs
  std::vector<NetDev> netdevs;
  GdrInfo gdr;
  std::vector<IommuGroup> iommu;
  std::string nvml_status;  // "NVML <driver>: N GPUs", or why it is absent
  // The loaded NVIDIA kernel module's version (module/nvidia/version), so that hosts running
  // different drivers differ even where NVML cannot be asked.
  std::optional<std::string> nvidia_driver;
  std::optional<NvmlFacts> nvml;
  std::vector<std::string> warnings;
};

struct TopologyOptions {
  bool use_nvml = true;  // live trees only; a snapshot carries its own NVML facts
};

// True when `root` is the machine's own /sys.
bool is_live_sysfs(const std::string& root);
// Reads everything from `sys`. For a live tree NVML is queried; for a captured tree the facts
// in its commbench-snapshot.json are used.
Topology probe_topology(Sysfs& sys, const TopologyOptions& options = {});
// The PCIe path between two devices as nvidia-smi names it: PIX, PXB, PHB, NODE or SYS.
std::string pci_path_level(const PciDevice& a, const PciDevice& b, int numa_nodes);

nlohmann::json topology_to_json(const Topology& topo);
void print_topology(const Topology& topo, std::ostream& out);
// Writes every file read into `dir` plus commbench-snapshot.json; `dir` appears only complete.
void capture_snapshot(const Sysfs& sys, const Topology& topo, const std::string& dir);

// The full commbench/topology/v1 document of the tree at `sysfs_root` ("/sys" for this host).
nlohmann::json probe_topology_json(const std::string& sysfs_root);

// What `run` records: this host's stable facts (GPU models and addresses, NIC names and rates,
// NUMA shape) and their fingerprint, probed from sysfs only (fast; NVML is not loaded).
// With `roof`, also the facts of the expected-performance model (roof_facts.hpp) under "roof".
struct RoofInputs;
nlohmann::json host_topology_facts(const std::string& sysfs_root = "/sys");
nlohmann::json host_topology_facts(const std::string& sysfs_root, const RoofInputs& roof);
// Combines every rank's host_topology_facts() (as JSON text): hosts, GPUs and NICs per host,
// per-host fingerprints and one fingerprint over the hardware (host names left out).
nlohmann::json topology_summary(const std::vector<std::string>& per_rank_facts);

}  // namespace cb
