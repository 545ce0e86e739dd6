// `tune --env NAME=v1,v2 [--env-grid FILE]`: every combination of the grid, and the baseline
// (the environment as it is), as fresh jobs with the variables set on every rank; one result set
// with `env` on every record; advice over combinations and algorithms with tune's noise-aware
// rule; --emit-env; a failed combination is recorded and the sweep goes on; --resume skips what
// an earlier sweep's .jsonl holds; Ctrl-C keeps what finished.
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <iostream>
#include <map>
#include <set>

#include "cmd/options.hpp"
#include "cmd/progress.hpp"
#include "cmd/tune.hpp"
#include "common/atomic_file.hpp"
#include "common/environment.hpp"
#include "common/error.hpp"
#include "common/units.hpp"
#include "report/compare.hpp"
#include "report/env_grid.hpp"
#include "report/repetitions.hpp"
#include "report/result_reader.hpp"
#include "report/tune.hpp"

namespace cb {

namespace {

// Why the job's results cannot stand for `combination`: a variable that rank 0 did not see with
// its value, or any rank whose value differs; "" when every rank saw it.
std::string verify(const RunMeta& meta, const EnvCombination& combination) {
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

struct Outcome {
  std::vector<ResultRecord> records;  // per repetition, with env (and repeat when N > 1)
  std::string failure;                // "" when the combination ran
  int interrupted = 0;
  RunMeta meta;
  bool have_meta = false;
};

Outcome run_combination(const JobSpec& base, const EnvCombination& combination, int repeats,
                        std::set<std::string>& said) {
  Outcome out;
  JobSpec spec = base;
  spec.env = EnvList(combination.begin(), combination.end());
  const std::string label = env_label(combination);
  for (int r = 0; r < repeats; ++r) {
    JobOutcome job = run_job(spec);
    print_diagnostics(job, said);
    if (job.interrupted) {
      out.interrupted = job.interrupted;
      return out;
    }
    if (job.exit_code != 0) {
      out.failure = fmt::format("exit {}: {}", job.exit_code, job.message);
      return out;
    }
    ResultFile f = parse_result_text(job.document, "job.json");
    if (!f.meta) {
      out.failure = "the job wrote no metadata";
      return out;
    }
    if (std::string why = verify(*f.meta, combination); !why.empty()) {
      out.failure = why;
      return out;
    }
    if (!out.have_meta) {
      out.meta = *f.meta;
      out.have_meta = true;
    }
    for (auto& rec : f.records) {
      rec.env = label;
      if (repeats > 1) rec.repeat = r;
      out.records.push_back(std::move(rec));
    }
  }
  return out;
}

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

// --emit-env's choice: among the combinations the advice chose for some size range (the
// noise-aware rule), the one whose default-algorithm results beat the baseline's by the best
// geometric-mean speedup over every measured case (validated results only). Empty when none
// was chosen or none beats it by more than the minimum gain.
struct EnvChoice {
  std::string label;
  double speedup = 1;
  int cases = 0;
};

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

}  // namespace

int execute_env_grid(const RunRequest& rq, const TuneRequest& tq, const TuneOptions& options) {
  check_run_request(rq);
  const int repeats = repeat_count(rq);
  check_job_launch(rq, "--env");
  std::vector<EnvAxis> axes;
  for (const auto& e : tq.env) axes.push_back(parse_env_axis(e));
  if (!tq.env_grid.empty()) {
    for (auto& a : read_env_grid(tq.env_grid)) axes.push_back(std::move(a));
  }
  std::vector<EnvCombination> combinations = {{}};  // the baseline: the environment as it is
  for (auto& c : env_combinations(axes)) combinations.push_back(std::move(c));

  // --resume: combinations an earlier sweep finished (their records are streamed only then).
  std::map<std::string, std::vector<ResultRecord>> resumed;
  if (!tq.resume.empty()) {
    for (auto& r : read_result_file(tq.resume).records) resumed[r.env].push_back(std::move(r));
  }

  const JobSpec spec = job_spec(rq);
  auto [streams, summaries] = job_writers(rq);
  for (auto& w : streams) w->begin(RunMeta{});

  Progress progress(rq.progress, true, {}, "combinations");
  std::set<std::string> said;
  std::vector<ResultRecord> all;
  std::vector<std::string> failures;
  RunMeta meta;
  bool have_meta = false;
  int interrupted = 0, finished = 0, skipped = 0;
  const int m = static_cast<int>(combinations.size());
  for (int k = 0; k < m && !interrupted; ++k) {
    const EnvCombination& c = combinations[k];
    const std::string label = env_label(c);
    if (auto it = resumed.find(label); it != resumed.end()) {
      for (const auto& r : it->second) {
        for (auto& w : streams) w->add(r);
        all.push_back(r);
      }
      ++skipped;
      ++finished;
      continue;
    }
    progress.update(static_cast<std::size_t>(k + 1), static_cast<std::size_t>(m),
                    fmt::format("combination {} of {}: {}", k + 1, m,
                                label.empty() ? "baseline (environment as it is)" : label));
    Outcome o = run_combination(spec, c, repeats, said);
    progress.clear();
    if (o.interrupted) {
      interrupted = o.interrupted;
      break;
    }
    if (!o.failure.empty()) {
      failures.push_back(fmt::format("{}: {}", label.empty() ? "baseline" : label, o.failure));
      std::cerr << "commbench: warning: combination " << (label.empty() ? "baseline" : label)
                << " failed (" << o.failure << "); the sweep goes on\n";
      continue;
    }
    if (!have_meta) {
      meta = o.meta;
      have_meta = true;
    }
    for (const auto& r : o.records) {
      for (auto& w : streams) w->add(r);
      all.push_back(r);
    }
    ++finished;
  }
  if (!interrupted) progress.finish();
  if (skipped > 0) {
    std::cerr << fmt::format("commbench: note: {} of {} combinations already complete in {}\n",
                             skipped, m, tq.resume);
  }
  for (auto& w : streams) w->finish();

  meta.command_line = invocation();
  meta.repetitions = repeats > 1 ? repeats : 0;
  meta.environment = steering_environment();  // the baseline: the environment as it is
  meta.environment_mismatch.clear();
  meta.env_failures = failures;
  std::vector<ResultRecord> results = repeats > 1 ? summarize_all(all) : all;
  for (auto& w : summaries) w->begin(meta);
  for (const auto& r : results) {
    for (auto& w : summaries) w->add(r);
  }
  for (auto& w : summaries) w->finish();

  if (!results.empty()) {
    auto ranges = recommend(as_candidates(results), options);
    print_advice(ranges,
                 "the environment combination and algorithm to use per size range (speedup over "
                 "the current environment's default, geometric mean)",
                 std::cout);
    std::set<std::string> winners;
    for (const auto& r : ranges) {
      auto bar = r.algorithm.find(" | ");
      winners.insert(bar == std::string::npos ? std::string() : r.algorithm.substr(0, bar));
    }
    EnvChoice best = best_combination(results, options.min_gain, winners);
    if (winners.size() > 1) {
      std::cout << "# note: the best environment differs by size range; one environment applies "
                   "to every size, so --emit-env takes the combination with the best geometric-"
                   "mean speedup over all cases: "
                << (best.label.empty() ? "the current environment" : best.label) << "\n";
    }
    if (!tq.emit_env.empty()) {
      EnvCombination chosen;
      for (const auto& c : combinations) {
        if (env_label(c) == best.label) chosen = c;
      }
      write_file_atomically(tq.emit_env, emit_env_text(best, chosen));
    }
    std::vector<ResultRecord> baseline;
    for (const auto& r : results) {
      if (r.env.empty()) baseline.push_back(r);
    }
    write_tuning_files(tq, recommend(baseline, options));
  }
  for (const auto& f : failures) std::cout << "# failed: " << f << "\n";
  std::cout << std::flush;
  if (interrupted) {
    runtime_error(
        "interrupted by signal {} ({}); {} of {} combinations finished and were written{}",
        interrupted, ::strsignal(interrupted), finished, m,
        tq.resume.empty() && streams.empty() ? std::string()
                                             : "; continue with --resume on the .jsonl output");
  }
  if (finished == 0) runtime_error("every combination failed (first: {})", failures.front());
  return 0;
}

}  // namespace cb
