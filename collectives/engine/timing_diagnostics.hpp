// COMMBENCH_DIAGNOSTICS=FILE, for bench/ scripts and tests: every rank appends one JSON line per
// measured case to FILE, with what the result record does not carry: the share of iterations
// slower than 10 x p50, the page faults the timing thread took and which other threads of the
// rank ran during its timed batches.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collectives/engine/thread_audit.hpp"
#include "collectives/engine/warmup_rule.hpp"

namespace cb {

inline constexpr const char* kDiagnosticsEnv = "COMMBENCH_DIAGNOSTICS";

class TimingDiagnostics {
 public:
  // Null unless COMMBENCH_DIAGNOSTICS names a file.
  static std::unique_ptr<TimingDiagnostics> from_environment();
  explicit TimingDiagnostics(std::string path) : path_(std::move(path)) {}

  ThreadAudit& audit() { return audit_; }
  // One line for a case: `samples` are its per-iteration times (each the max over ranks);
  // `whole_batches` the batches timed without a clock read per iteration (behind time_us);
  // `warmup` how the warm-up ended. Starts the audit afresh for the next case.
  void write_case(int rank, const std::string& backend, const std::string& what,
                  std::uint64_t bytes, const std::vector<double>& samples,
                  std::uint64_t whole_batches, const WarmupOutcome& warmup);

 private:
  std::string path_;
  ThreadAudit audit_;
};

// The share of `samples` above `factor` times their median (0 when empty).
double share_above_median_multiple(const std::vector<double>& samples, double factor);

}  // namespace cb
