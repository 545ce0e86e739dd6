#include "report/tune/env_advice.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <ostream>
#include <set>

#include "common/invocation.hpp"
#include "common/shell_text.hpp"
#include "common/text_table.hpp"
#include "common/units.hpp"
#include "report/record_key.hpp"
#include "report/repetitions.hpp"

namespace cb {

namespace {

// launch -> time, per algorithm, per combination, per measured case (a key without env and
// algorithm).
using Series = std::map<int, double>;
using ByAlgorithm = std::map<std::string, Series>;
using Table = std::map<RecordKey, std::map<std::string, ByAlgorithm>>;

Table launch_table(const std::vector<ResultRecord>& results) {
  Table t;
  for (const auto& r : results) {
    for (const auto& l : launches_of(r)) {
      if ((l.wrong && *l.wrong > 0) || l.time_us <= 0) continue;
      RecordKey k = key_of(l);
      k.env.clear();
      k.algorithm.clear();
      const std::string alg = is_default_algorithm(l.algorithm) ? "default" : l.algorithm;
      t[k][r.env][alg][l.repeat.value_or(0)] = l.time_us;
    }
  }
  return t;
}

double median_time(const Series& s) {
  std::vector<double> v;
  for (const auto& [launch, t] : s) v.push_back(t);
  return median_of(v);
}

// The fastest algorithm by its median over launches.
std::string best_algorithm(const ByAlgorithm& algorithms) {
  std::string best;
  double best_time = 0;
  for (const auto& [alg, s] : algorithms) {
    const double m = median_time(s);
    if (best.empty() || m < best_time) best = alg, best_time = m;
  }
  return best;
}

EnvLaunches launches(const Series& s, const std::map<int, ControlFigures>* control) {
  EnvLaunches out;
  for (const auto& [launch, t] : s) {
    out.times.push_back(t);
    ControlFigures c;
    if (control) {
      if (auto it = control->find(launch); it != control->end()) c = it->second;
    }
    out.control.push_back(c);
  }
  return out;
}

// Each launch's median over `cases` of the best algorithm's time (a case that stalled in one
// launch does not move it; launches that lack one of the cases left out).
Series level_series(const Table& t, const std::vector<RecordKey>& cases, const std::string& env) {
  std::map<int, std::vector<double>> times;
  for (const auto& k : cases) {
    const ByAlgorithm& algs = t.at(k).at(env);
    for (const auto& [launch, time] : algs.at(best_algorithm(algs))) {
      times[launch].push_back(time);
    }
  }
  Series s;
  for (const auto& [launch, v] : times) {
    if (v.size() == cases.size()) s[launch] = median_of(v);
  }
  return s;
}

const std::map<int, ControlFigures>* control_of(const EnvControls& c, const std::string& env) {
  auto it = c.find(env);
  return it == c.end() ? nullptr : &it->second;
}

std::string sizes_text(const RecordKey& k) {
  return format_size(k.bytes);
}

}  // namespace

std::string env_verdict_line(const EnvChoice& c) {
  if (c.candidate.empty()) return "KEEP the current environment: no combination was measured";
  const std::string what = fmt::format(
      "{}, its best algorithm's time per launch over {} cases against the current "
      "environment's best,",
      c.candidate, c.cases);
  const EnvVerdict& v = c.verdict;
  if (v.outcome == EnvOutcome::Advised) {
    return fmt::format(
        "ADVISE {} is {}: beyond the floor and the noise between launches (the environment's "
        "part {}, the algorithm's {} over the current default)",
        what, env_gain_text(v), gain_x_text(c.environment_gain), gain_x_text(c.algorithm_gain));
  }
  if (v.outcome == EnvOutcome::Inconclusive) {
    // Where the launches were compared (the gate kept too few to decide), their figures too.
    const std::string figures = v.ratio.low > 0 ? ": " + env_gain_text(v) : "";
    return fmt::format("INCONCLUSIVE, keep the current environment: {} could not be judged: {}{}",
                       what, v.why, figures);
  }
  return fmt::format(
      "KEEP the current environment: {} the fastest combination, is {}: not beyond the floor "
      "and the noise between launches",
      what, env_gain_text(v));
}

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

EnvChoice advise_env(const std::vector<ResultRecord>& results, const EnvControls& controls,
                     const TuneOptions& options, std::ostream& out) {
  const Table t = launch_table(results);
  std::set<std::string> labels;
  std::vector<RecordKey> cases;
  for (const auto& [k, envs] : t) {
    if (!envs.count("")) continue;
    cases.push_back(k);
    for (const auto& [env, algs] : envs) {
      if (!env.empty()) labels.insert(env);
    }
  }
  // Only cases every combination measured enter the verdict over all of them.
  std::vector<RecordKey> common;
  for (const auto& k : cases) {
    bool all = true;
    for (const auto& l : labels) all = all && t.at(k).count(l);
    if (all) common.push_back(k);
  }
  EnvChoice choice;
  choice.cases = static_cast<int>(common.size());
  const int family = static_cast<int>(labels.size());
  const Series ref_level = level_series(t, common, "");
  for (const auto& label : labels) {
    if (common.empty()) break;
    EnvVerdict v = judge_env(launches(ref_level, control_of(controls, "")),
                             launches(level_series(t, common, label), control_of(controls, label)),
                             options.min_gain, family);
    const bool better =
        choice.candidate.empty() ||
        (v.outcome == EnvOutcome::Advised) > (choice.verdict.outcome == EnvOutcome::Advised) ||
        ((v.outcome == EnvOutcome::Advised) == (choice.verdict.outcome == EnvOutcome::Advised) &&
         v.ratio.ratio < choice.verdict.ratio.ratio);
    if (better) choice.candidate = label, choice.verdict = v;
  }
  if (!choice.candidate.empty()) {
    double alg_log = 0;
    for (const auto& k : common) {
      const ByAlgorithm& ref = t.at(k).at("");
      if (ref.count("default")) {
        alg_log +=
            std::log(median_time(ref.at("default")) / median_time(ref.at(best_algorithm(ref))));
      }
    }
    choice.algorithm_gain = std::exp(alg_log / static_cast<double>(common.size()));
    choice.environment_gain = 1 / choice.verdict.ratio.ratio;
  }
  if (choice.verdict.outcome == EnvOutcome::Advised) choice.label = choice.candidate;
  choice.line = env_verdict_line(choice);
  out << "#\n# tune --env: " << choice.line << "\n";

  // Per case: the fastest combination against the reference, judged alike (a family of every
  // case and combination).
  TextTable table;
  table.set_header({"backend", "collective", "dtype", "op", "placement", "sizes", "use",
                    "environment", "algorithm", "bound", "launches", "verdict"},
                   {TextTable::Align::Left, TextTable::Align::Left, TextTable::Align::Left,
                    TextTable::Align::Left, TextTable::Align::Left, TextTable::Align::Right,
                    TextTable::Align::Left, TextTable::Align::Right, TextTable::Align::Right,
                    TextTable::Align::Right, TextTable::Align::Right, TextTable::Align::Left});
  const int case_family = std::max<int>(1, static_cast<int>(cases.size() * labels.size()));
  for (const auto& k : cases) {
    const ByAlgorithm& ref = t.at(k).at("");
    const std::string ref_best = best_algorithm(ref);
    const Series& ref_series = ref.at(ref_best);
    std::string best_label;
    EnvVerdict best;
    std::string best_alg = ref_best;
    for (const auto& [env, algs] : t.at(k)) {
      if (env.empty()) continue;
      const std::string alg = best_algorithm(algs);
      EnvVerdict v = judge_env(launches(ref_series, control_of(controls, "")),
                               launches(algs.at(alg), control_of(controls, env)), options.min_gain,
                               case_family);
      if (best_label.empty() || v.ratio.ratio < best.ratio.ratio) {
        best_label = env, best = v, best_alg = alg;
      }
    }
    const double alg_gain =
        ref.count("default") ? median_time(ref.at("default")) / median_time(ref_series) : 1;
    const bool advised = best.outcome == EnvOutcome::Advised;
    const std::string use = advised ? best_label + " | " + best_alg : "current | " + ref_best;
    table.add_row(
        {k.backend, k.collective, k.dtype, k.op, k.placement, sizes_text(k), use,
         best_label.empty() ? "-" : gain_x_text(1 / best.ratio.ratio), gain_x_text(alg_gain),
         best_label.empty() ? "-" : gain_bound_text(best),
         fmt::format("{} v {}", best.ratio.candidate_launches, best.ratio.reference_launches),
         best_label.empty() ? "-"
                            : std::string(env_outcome_name(best.outcome)) + " " + best_label});
  }
  out << "# tune: the environment combination and algorithm to use per size (environment: the "
         "fastest combination's best algorithm over the current environment's best; algorithm: "
         "the current environment's best over its default; bound: 99 % over launches)\n";
  table.print(out, "# ");
  out << std::flush;
  return choice;
}

std::string emit_env_text(const EnvChoice& c, const EnvCombination& combination,
                          const std::string& cut, const std::vector<std::string>& unmeasured) {
  // Comments carry labels and values (from the command line or a --resume file): each goes
  // through shell_comment, so none can end its line and become a command when sourced.
  std::string mark;
  if (!cut.empty()) {
    mark = shell_comment(
        fmt::format("INCOMPLETE: the sweep was {}; not measured in full: {}", cut,
                    unmeasured.empty() ? "none" : fmt::format("{}", fmt::join(unmeasured, ", "))));
  }
  std::string s =
      mark +
      "# Environment chosen by commbench tune --env: NAME=VALUE lines that NCCL reads as\n"
      "# NCCL_CONF_FILE (or ~/.nccl.conf) and a shell can source (set -a; . FILE; set +a).\n" +
      shell_comment(c.line);
  if (!cut.empty()) {
    return s + "# Nothing is set from a cut sweep: finish it with --resume on its .jsonl output.\n";
  }
  if (c.label.empty()) {
    return s + "# No combination beat the current environment beyond the noise: keep it.\n";
  }
  for (const auto& [name, value] : combination) s += name + "=" + shell_quote(value) + "\n";
  return s;
}

}  // namespace cb
