// The expected-performance model: for a result record, the ceiling on its busbw (the roof) from
// the hardware facts `run` recorded for each host (meta.topology.roof_facts, written by
// probes/roof_facts.cpp), the efficiency busbw / roof where bandwidth dominates, and the
// judgement of a collective on its large-message efficiency. Reads records and meta, and from the
// backend registry which model fits a backend's records (BackendEntry::roof).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/record.hpp"

namespace cb {

// What bounds a case, and so which default threshold judges it.
// Cache: the case's buffers fit in the CPU caches, which host memory's roof does not bound; no
// roof and no efficiency.
enum class RoofKind { Unknown, NvLink, Nvls, Pcie, Network, HostMemory, Cache };
std::string_view roof_kind_name(RoofKind k);  // "NVLink", "NVLS", "PCIe", "network", ...

struct Roof {
  RoofKind kind = RoofKind::Unknown;
  std::optional<double> GBps;  // empty: unknown, or not a measure of the hardware (see basis)
  std::string basis;           // the facts: "NVLink4 x18 via NVSwitch", "unknown: ..."
};

// Efficiency is given where moving the case's busbw bytes at the roof takes at least this long:
// latency (microseconds to tens of microseconds per call) is then at most a few tenths of it.
inline constexpr double kBandwidthDominatedUs = 100;

// Memory copies per busbw byte at the busiest rank for host-memory collectives: a byte received
// is copied once (single-copy transports); a reduced byte adds half a copy (read two, write one).
double host_copies_per_busbw_byte(std::string_view collective);

// The bytes of buffer the `local` ranks of one host touch in one call of the case (each rank's
// send and receive buffers as docs/output.md's size table gives them; one buffer in place; the
// root, where there is one, counted on this host).
double host_working_set_bytes(const ResultRecord& r, int local);
// Host memory bounds a case only where its working set is at least this many times the host's CPU
// caches (every data and unified cache together): below, the data can stay in them, where copies
// run faster than the memory roof (this machine: 45-50 GB/s at 16 MiB against 18-22 in memory).
inline constexpr double kBeyondCachesFactor = 2;

// The model. `topology` is meta.topology of the record's file (null: unknown).
Roof roof_for(const ResultRecord& r, const nlohmann::json& topology);
// Sets roof_GBps and roof_basis from `topology` (kept as they are when it has no facts and the
// record has a roof already), and efficiency from them.
void apply_roof(ResultRecord& r, const nlohmann::json& topology);

// The default threshold on large-message efficiency for a kind of roof (see docs: each is below
// the healthy public figures and above those figures less 30 %). Empty for Unknown.
std::optional<double> default_min_efficiency(RoofKind k);
// The kind named by a record's roof_basis (its first word), for records read back from files.
RoofKind roof_kind_of_basis(std::string_view basis);

// A collective's efficiency at its largest sizes: the median over the records at the (up to)
// three largest sizes that carry an efficiency.
struct LargeMessageEfficiency {
  std::optional<double> efficiency;  // empty: not judged
  std::optional<double> roof_GBps;
  RoofKind kind = RoofKind::Unknown;
  std::string basis;
  std::uint64_t min_bytes = 0, max_bytes = 0;  // the sizes used
  int sizes = 0;
  std::string why_not;  // when not judged
  bool allocator_bound = false;  // not judged because of the page faults of each call
};
// Not judged where, at those sizes, the ranks page-faulted in at least kAllocatorBoundShare of a
// call's bytes on every call (ResultRecord::fault_bytes): the allocator bounds such a library.
inline constexpr double kAllocatorBoundShare = 0.125;
LargeMessageEfficiency large_message_efficiency(const std::vector<const ResultRecord*>& records);

// "allreduce: 0.82 of the 450 GB/s NVLink roof (NVLink4 x18 via NVSwitch)", or why not judged.
std::string efficiency_line(const std::string& collective, const LargeMessageEfficiency& e);

}  // namespace cb
