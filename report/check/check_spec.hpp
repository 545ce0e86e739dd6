// The acceptance spec (TOML) that `check` evaluates: [[results]] requirements on measured
// records and [[topology]] requirements on a commbench/topology/v1 document. Parsing is strict:
// an unknown key, a wrong type or an impossible value is a usage Error naming the file and line.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cb {

enum class Severity { Error, Warning };
const char* severity_name(Severity s);

struct ResultRequirement {
  std::string name;
  int line = 0;  // where the [[results]] table starts
  std::string collective;
  std::optional<std::string> backend, algorithm, dtype, op, placement;  // filters
  std::optional<std::string> env;  // `tune --env` combination ("" = the baseline)
  std::optional<int> nranks;
  std::uint64_t min_bytes = 0;  // size range, inclusive
  std::uint64_t max_bytes = std::numeric_limits<std::uint64_t>::max();
  std::optional<double> min_busbw_GBps;  // every matched record must reach it
  std::optional<double> max_time_us;     // mean time per operation
  std::optional<double> max_p99_us;      // tail latency
  std::optional<double> min_efficiency;  // busbw / roof (report/roof/roof.hpp)
  Severity severity = Severity::Error;
};

struct TopologyRequirement {
  std::string name;
  int line = 0;
  std::optional<int> gpus;             // exact count
  std::optional<int> numa_nodes;       // exact count
  std::optional<double> pcie_min_gts;  // every GPU and NIC link, current speed
  std::optional<int> pcie_min_width;   // every GPU and NIC link, current width
  bool nvlink_all_up = false;          // every GPU has the most NVLinks any GPU has, > 0
  std::optional<int> ib_ports;         // exact count of InfiniBand ports
  std::optional<double> ib_ports_active_min_gbps;  // every InfiniBand port ACTIVE at >= this rate
  bool gdr = false;                                // GPUDirect RDMA module present
  bool no_warnings = false;                        // the probe reported no problem
  bool identical_hosts = false;  // every host of a cluster-topology document has one shape
  Severity severity = Severity::Error;
};

// A requirement on a `probe links` document (commbench/links/v2).
struct LinksRequirement {
  std::string name;
  int line = 0;
  std::optional<double> min_fraction_of_median;  // no straggler at this fraction
  std::optional<double> min_GBps;                // every link between hosts
  std::optional<double> max_latency_us;          // every link between hosts
  std::optional<std::string> nic;                // only that NIC's rail (per-NIC probes)
  Severity severity = Severity::Error;
};

struct Spec {
  std::string path;
  std::string name;  // optional top-level name; the file name otherwise
  std::vector<ResultRequirement> results;
  std::vector<TopologyRequirement> topology;
  std::vector<LinksRequirement> links;
};

// Checks names of collectives, dtypes and ops: each returns the canonical name, or nothing for an
// unknown one; the *_names strings list what is accepted. An empty function accepts anything.
struct SpecVocabulary {
  std::function<std::optional<std::string>(std::string_view)> collective, dtype, op;
  std::string collective_names, dtype_names, op_names;
};

Spec parse_spec(std::string_view text, const std::string& path, const SpecVocabulary& vocab = {});
Spec read_spec(const std::string& path, const SpecVocabulary& vocab = {});

}  // namespace cb
