#include "report/tune/tune.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace cb {

namespace {

using GroupKey = std::tuple<std::string, std::string, std::string, std::string, std::string, int,
                            int, std::string>;  // ... nranks, split

// Relative standard error of a record's mean time.
double rse(const ResultRecord& r) {
  return r.iters > 0 ? r.cv / std::sqrt(static_cast<double>(r.iters)) : 0.0;
}

struct Choice {
  std::string algorithm;
  double speedup = 1.0;
  double margin = 0;  // the gain the fastest algorithm had to exceed
};

// The algorithm to use at one size: the fastest valid record, unless default is within the gain
// and noise margins of it.
Choice choose(const std::vector<const ResultRecord*>& at_size, const TuneOptions& o) {
  const ResultRecord* best = nullptr;
  const ResultRecord* fallback = nullptr;
  for (const ResultRecord* r : at_size) {
    if (r->wrong && *r->wrong > 0) continue;
    if (is_default_algorithm(r->algorithm)) fallback = r;
    if (!best || r->time_us < best->time_us) best = r;
  }
  if (!best) return {"", 1.0};
  if (!fallback) return {best->algorithm, 1.0};
  if (best == fallback) return {"default", 1.0, o.min_gain};
  // Both in units of default's time: the gain, and the standard error of the difference of the
  // two means (each mean's own standard error is its time x its relative standard error).
  double gain = (fallback->time_us - best->time_us) / fallback->time_us;
  double noise = o.noise_sigmas *
                 std::hypot(rse(*best) * best->time_us / fallback->time_us, rse(*fallback));
  const double margin = std::max(o.min_gain, noise);
  if (gain <= margin) return {"default", 1.0, margin};
  return {best->algorithm, fallback->time_us / best->time_us, margin};
}

}  // namespace

bool is_default_algorithm(const std::string& algorithm) {
  return algorithm.rfind("default", 0) == 0;
}

std::vector<TuneRange> recommend(const std::vector<ResultRecord>& records, const TuneOptions& o) {
  // Groups in order of first appearance; sizes within a group in increasing order.
  std::vector<GroupKey> order;
  std::map<GroupKey, std::map<std::uint64_t, std::vector<const ResultRecord*>>> groups;
  for (const auto& r : records) {
    if (r.collective == "barrier" && r.bytes != 0) continue;
    GroupKey key{r.backend, r.collective, r.dtype, r.op, r.placement, r.root, r.nranks, r.split};
    if (!groups.count(key)) order.push_back(key);
    groups[key][r.bytes].push_back(&r);
  }
  std::vector<TuneRange> out;
  for (const auto& key : order) {
    TuneRange* open = nullptr;
    double log_speedup = 0;
    auto close = [&] {
      if (open) open->speedup = std::exp(log_speedup / open->sizes);
    };
    for (const auto& [bytes, at_size] : groups[key]) {
      Choice c = choose(at_size, o);
      if (c.algorithm.empty()) continue;
      if (!open || open->algorithm != c.algorithm) {
        close();
        const ResultRecord& r = *at_size.front();
        out.push_back({r.backend, r.library, r.collective, r.dtype, r.op, r.placement, r.root,
                       r.nranks, r.nnodes, bytes, bytes, c.algorithm, 1.0, 0, 0, r.split});
        open = &out.back();
        log_speedup = 0;
      }
      open->max_bytes = bytes;
      open->sizes += 1;
      open->margin = std::max(open->margin, c.margin);
      log_speedup += std::log(c.speedup);
    }
    close();
  }
  return out;
}

}  // namespace cb
