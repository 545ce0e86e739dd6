#include "collectives/engine/timing_diagnostics.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "collectives/engine/stats.hpp"
#include "common/error.hpp"

namespace cb {

std::unique_ptr<TimingDiagnostics> TimingDiagnostics::from_environment() {
  const char* path = std::getenv(kDiagnosticsEnv);
  if (!path || !*path) return nullptr;
  int fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) usage_error("cannot write the {} file '{}'", kDiagnosticsEnv, path);
  ::close(fd);
  return std::make_unique<TimingDiagnostics>(path);
}

double share_above_median_multiple(const std::vector<double>& samples, double factor) {
  if (samples.empty()) return 0;
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  const double limit = factor * percentile_sorted(sorted, 50);
  auto above = sorted.end() - std::upper_bound(sorted.begin(), sorted.end(), limit);
  return static_cast<double>(above) / static_cast<double>(sorted.size());
}

void TimingDiagnostics::write_case(int rank, const std::string& backend, const std::string& what,
                                   std::uint64_t bytes, const std::vector<double>& samples,
                                   std::uint64_t whole_batches, const WarmupOutcome& warmup) {
  nlohmann::json threads = nlohmann::json::array();
  for (const auto& a : audit_.activity()) {
    threads.push_back({{"tid", a.tid},
                       {"name", a.name},
                       {"batches", a.batches},
                       {"slices", a.slices},
                       {"run_ns", a.run_ns}});
  }
  nlohmann::json line = {{"rank", rank},
                         {"backend", backend},
                         {"case", what},
                         {"bytes", bytes},
                         {"iters", samples.size()},
                         {"share_above_10x_p50", share_above_median_multiple(samples, 10)},
                         {"batches", audit_.batches()},
                         {"whole_batches", whole_batches},
                         {"warmup_iters", warmup.iters},
                         {"warmup_end", std::string(name(warmup.end))},
                         {"page_faults", audit_.own_page_faults()},
                         {"other_threads", threads}};
  std::string text = line.dump() + "\n";
  // One write per line on an O_APPEND descriptor: the ranks' lines do not interleave.
  int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd >= 0) {
    ssize_t ignored = ::write(fd, text.data(), text.size());
    (void)ignored;
    ::close(fd);
  }
  audit_.reset();
}

}  // namespace cb
