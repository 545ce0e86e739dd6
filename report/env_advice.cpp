#include "report/env_advice.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <ostream>

#include "report/compare.hpp"
#include "report/tune_text.hpp"

namespace cb {

namespace {

// The records the advice compares: a combination's algorithm carries its label, so the
// baseline's "default" is the one default and every combination is a candidate against it.
std::vector<ResultRecord> as_candidates(const std::vector<ResultRecord>& records) {
  std::vector<ResultRecord> out = records;
  for (auto& r : out) {
    if (!r.env.empty()) r.algorithm = r.env + " | " + r.algorithm;
    r.env.clear();
  }
  return out;
}

EnvChoice best_combination(const std::vector<ResultRecord>& summaries, double min_gain,
                           const std::set<std::string>& winners) {
  auto case_key = [](const ResultRecord& r) {
    RecordKey k = key_of(r);
    k.env.clear();
    return k;
  };
  std::map<RecordKey, double> baseline;
  for (const auto& r : summaries) {
    if (r.env.empty() && is_default_algorithm(r.algorithm) && !(r.wrong && *r.wrong > 0)) {
      RecordKey k = case_key(r);
      k.algorithm = "default";
      baseline[k] = r.time_us;
    }
  }
  std::map<std::string, std::pair<double, int>> logs;  // label -> sum log speedup, cases
  for (const auto& r : summaries) {
    if (r.env.empty() || !is_default_algorithm(r.algorithm) || (r.wrong && *r.wrong > 0)) continue;
    RecordKey k = case_key(r);
    k.algorithm = "default";
    auto it = baseline.find(k);
    if (it == baseline.end() || r.time_us <= 0) continue;
    auto& [sum, n] = logs[r.env];
    sum += std::log(it->second / r.time_us);
    ++n;
  }
  EnvChoice best;
  for (const auto& [label, sn] : logs) {
    if (!winners.count(label)) continue;  // never chosen by the noise-aware rule
    double g = std::exp(sn.first / sn.second);
    if (g > best.speedup) best = {label, g, sn.second};
  }
  if (best.speedup <= 1 + min_gain) best.label.clear();
  return best;
}

}  // namespace

std::string verify_combination(const RunMeta& meta, const EnvCombination& combination) {
  for (const auto& [name, value] : combination) {
    auto it = meta.environment.find(name);
    if (it == meta.environment.end()) return fmt::format("rank 0 did not see {}", name);
    if (it->second != value) {
      return fmt::format("rank 0 saw {}={} instead of {}", name, it->second, value);
    }
    for (const auto& m : meta.environment_mismatch) {
      if (m.rfind(name + ":", 0) == 0) return "not every rank saw the combination: " + m;
    }
  }
  return {};
}

EnvChoice advise_env(const std::vector<ResultRecord>& results, const TuneOptions& options,
                     std::ostream& out) {
  auto ranges = recommend(as_candidates(results), options);
  print_advice(ranges,
               "the environment combination and algorithm to use per size range (speedup over "
               "the current environment's default, geometric mean)",
               out);
  std::set<std::string> winners;
  for (const auto& r : ranges) {
    auto bar = r.algorithm.find(" | ");
    winners.insert(bar == std::string::npos ? std::string() : r.algorithm.substr(0, bar));
  }
  EnvChoice best = best_combination(results, options.min_gain, winners);
  if (winners.size() > 1) {
    out << "# note: the best environment differs by size range; one environment applies "
           "to every size, so --emit-env takes the combination with the best geometric-"
           "mean speedup over all cases: "
        << (best.label.empty() ? "the current environment" : best.label) << "\n";
  }
  return best;
}

std::string emit_env_text(const EnvChoice& c, const EnvCombination& combination) {
  std::string s =
      "# Environment chosen by commbench tune --env: NAME=VALUE lines that NCCL reads as\n"
      "# NCCL_CONF_FILE (or ~/.nccl.conf) and a shell can source (set -a; . FILE; set +a).\n";
  if (c.label.empty()) {
    return s + "# No combination beat the current environment by more than --min-gain: keep it.\n";
  }
  s +=
      fmt::format("# {:.2f}x faster than the current environment (geometric mean over {} cases).\n",
                  c.speedup, c.cases);
  for (const auto& [name, value] : combination) s += name + "=" + value + "\n";
  return s;
}

}  // namespace cb
