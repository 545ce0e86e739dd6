// `tune --env NAME=v1,v2 [--env-grid FILE]`: every combination of the grid, and the baseline
// (the environment as it is), as fresh jobs with the variables set on every rank, each in
// --rounds launches interleaved in a shuffled order per round; one result set with `env` on
// every record; advice judged over the launches (report/tune/env_advice); --emit-env; a failed
// combination is recorded and the sweep goes on; --resume skips what an earlier sweep's .jsonl
// holds; Ctrl-C keeps what finished.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <map>
#include <numeric>
#include <random>
#include <sstream>

#include "app/job_sweep.hpp"
#include "app/tune.hpp"
#include "collectives/catalogue/names.hpp"
#include "common/atomic_file.hpp"
#include "common/environment.hpp"
#include "common/error.hpp"
#include "report/format/result_reader.hpp"
#include "report/tune/env_advice.hpp"
#include "report/tune/env_grid.hpp"
#include "report/tune/tune_text.hpp"

namespace cb {

namespace {

// The grid's combinations, the baseline (the environment as it is) first.
std::vector<EnvCombination> grid_combinations(const TunePlan& tp) {
  std::vector<EnvAxis> axes;
  for (const auto& e : tp.env) axes.push_back(parse_env_axis(e));
  if (!tp.env_grid.empty()) {
    for (auto& a : read_env_grid(tp.env_grid)) axes.push_back(std::move(a));
  }
  std::vector<EnvCombination> combinations = {{}};
  for (auto& c : env_combinations(axes)) combinations.push_back(std::move(c));
  return combinations;
}

// How the sweep went: failed combinations, the signal that stopped it, what finished, each
// launch's control measurement.
struct GridState {
  std::vector<std::string> failures;
  int interrupted = 0, finished = 0, skipped = 0;
  std::vector<bool> out;         // per combination: failed or resumed, not run again
  std::vector<int> rounds_done;  // per combination: rounds whose launches were kept
  EnvControls controls;
};

// One launch unit: round `round` (0-based) of combination `c`, the `index`th of `total`.
struct Slot {
  int round = 0, rounds = 1, repeats = 1;
  std::size_t index = 0, total = 0;
};

// Runs one round of combination `k`; a failure takes the combination out of the sweep.
void run_round(JobSweep& sweep, const EnvCombination& c, std::size_t k, const Slot& s,
               GridState& st) {
  const std::string label = env_label(c);
  const std::string name = label.empty() ? "baseline" : label;
  JobGroup group{
      EnvList(c.begin(), c.end()),
      label,
      s.repeats,
      s.round * s.repeats,
      fmt::format("launch {} of {}: {} (round {} of {})", s.index, s.total,
                  label.empty() ? "baseline (environment as it is)" : label, s.round + 1, s.rounds),
      true};
  GroupOutcome o = sweep.run(group, s.index, s.total, [&](const std::optional<RunMeta>& meta) {
    return meta ? verify_combination(*meta, c) : "the job wrote no metadata";
  });
  if ((st.interrupted = o.interrupted)) return;
  std::string failure =
      o.exit_code != 0 ? fmt::format("exit {}: {}", o.exit_code, o.message) : o.rejected;
  if (!failure.empty()) {
    st.failures.push_back(fmt::format("{}: {}", name, failure));
    std::cerr << "commbench: warning: combination " << name << " failed (" << failure
              << "); the sweep goes on\n";
    st.out[k] = true;
    return;
  }
  for (const auto& l : o.launches) {
    st.controls[label][l.repeat.value_or(0)] = {l.pingpong_ns(), l.compute_us()};
  }
  sweep.keep(o.records, o.meta);
  if (++st.rounds_done[k] == s.rounds) ++st.finished;
}

// Every round of every combination, each round in its own shuffled order, so that no
// combination's launches all fall into one stretch of the machine.
void run_rounds(JobSweep& sweep, const std::vector<EnvCombination>& grid, int rounds, int repeats,
                GridState& st) {
  std::mt19937_64 shuffle(std::random_device{}());
  std::vector<std::size_t> order(grid.size());
  std::iota(order.begin(), order.end(), 0);
  const std::size_t runs = std::count(st.out.begin(), st.out.end(), false);
  Slot s{0, rounds, repeats, 0, runs * static_cast<std::size_t>(rounds)};
  for (s.round = 0; s.round < rounds && !st.interrupted; ++s.round) {
    std::shuffle(order.begin(), order.end(), shuffle);
    for (std::size_t k : order) {
      if (st.out[k] || st.interrupted) continue;
      ++s.index;
      run_round(sweep, grid[k], k, s, st);
    }
  }
}

// The combinations an interrupted sweep did not measure in every round.
std::vector<std::string> unmeasured(const std::vector<EnvCombination>& grid, const GridState& st,
                                    int rounds) {
  std::vector<std::string> out;
  for (std::size_t k = 0; k < grid.size(); ++k) {
    if (st.out[k] || st.rounds_done[k] >= rounds) continue;
    const std::string label = env_label(grid[k]);
    out.push_back(label.empty() ? "baseline" : label);
  }
  return out;
}

// The advice over the results, --emit-env (marked when the sweep was cut) and the backends'
// tuning files from the baseline.
void advise(const std::vector<ResultRecord>& results, const std::vector<EnvCombination>& grid,
            const TunePlan& tp, const GridState& st) {
  if (tp.text.candidates) print_candidates(results, kShownCandidates, std::cout);
  std::ostringstream advice;
  EnvChoice best = advise_env(results, st.controls, tp.options, advice);
  for (const auto& f : st.failures) advice << "# failed: " << f << "\n";
  print_tune_text(tp.text, advice.str());
  if (!tp.emit_env.empty()) {
    EnvCombination chosen;
    for (const auto& c : grid) {
      if (env_label(c) == best.label) chosen = c;
    }
    const std::string cut = st.interrupted
                                ? fmt::format("interrupted by signal {} ({})", st.interrupted,
                                              ::strsignal(st.interrupted))
                                : std::string();
    write_file_atomically(tp.emit_env,
                          emit_env_text(best, chosen, cut, unmeasured(grid, st, tp.rounds)));
  }
  std::vector<ResultRecord> baseline;
  for (const auto& r : results) {
    if (r.env.empty()) baseline.push_back(r);
  }
  write_tuning_files(tp.emit, recommend(baseline, tp.options));
}

// What shapes the sweep's measurements, as far as its plan says before any rank runs.
std::vector<SweepDimension> sweep_dimensions(const RunPlan& plan) {
  const SweepOptions& o = plan.sweep;
  auto names = [](const auto& values) {
    std::vector<std::string> out;
    for (const auto& v : values) out.emplace_back(name(v));
    return out;
  };
  const bool every_collective = o.collectives.size() == all_collectives().size();
  std::vector<SweepDimension> d;
  d.push_back({"backends", [](const ResultRecord& r) { return r.backend; }, plan.backends, {}});
  const bool ranks_known = plan.launch.empty() || plan.nranks;
  d.push_back({"ranks",
               [](const ResultRecord& r) { return std::to_string(r.nranks); },
               ranks_known ? std::vector<std::string>{std::to_string(wanted_ranks(plan))}
                           : std::vector<std::string>{},
               {}});
  d.push_back({"collectives",
               [](const ResultRecord& r) { return r.collective; },
               every_collective ? std::vector<std::string>{} : names(o.collectives),
               {}});
  const bool every_algorithm =
      std::find(o.algorithms.begin(), o.algorithms.end(), "all") != o.algorithms.end();
  d.push_back({"algorithms",
               [](const ResultRecord& r) {
                 return is_default_algorithm(r.algorithm) ? std::string("default") : r.algorithm;
               },
               every_algorithm ? std::vector<std::string>{} : o.algorithms,
               {}});
  std::vector<std::string> dtypes;
  for (DType t : o.dtypes) dtypes.emplace_back(info(t).name);
  d.push_back(
      {"dtypes",
       [](const ResultRecord& r) { return r.collective == "barrier" ? std::string() : r.dtype; },
       dtypes,
       {}});
  d.push_back({"ops",
               [](const ResultRecord& r) { return r.op == "none" ? std::string() : r.op; },
               names(o.ops),
               {}});
  d.push_back(
      {"placements",
       [](const ResultRecord& r) { return r.placement == "none" ? std::string() : r.placement; },
       names(o.placements),
       {}});
  std::vector<std::string> splits;
  for (const auto& split : o.split.splits) splits.push_back(split_name(split));
  d.push_back({"splits", [](const ResultRecord& r) { return r.split; }, splits, {}});
  std::vector<std::string> sizes;
  for (auto b : sweep_sizes(o)) sizes.push_back(std::to_string(b));
  // A size is rounded to whole elements (and ranks): near the requested one is the same size.
  d.push_back({"sizes",
               [](const ResultRecord& r) {
                 return r.collective == "barrier" ? std::string() : std::to_string(r.bytes);
               },
               sizes,
               [](const std::string& have, const std::string& want) {
                 const double h = std::stod(have), w = std::stod(want);
                 return std::abs(h - w) <= std::max(w / 2, 4096.0);
               }});
  return d;
}

// --resume: the earlier sweep's records by combination; a usage Error when they were measured
// by another sweep (other collectives, ranks, sizes, ...), which this one would not measure again.
std::map<std::string, std::vector<ResultRecord>> resumed_records(const RunPlan& plan,
                                                                 const TunePlan& tp) {
  std::map<std::string, std::vector<ResultRecord>> resumed;
  if (tp.resume.empty()) return resumed;
  std::vector<ResultRecord> records = read_result_file(tp.resume).records;
  if (std::string why = sweep_difference(records, sweep_dimensions(plan)); !why.empty()) {
    usage_error(
        "--resume {} holds another sweep's results ({}): resume with the options that "
        "sweep used, or start without --resume",
        tp.resume, why);
  }
  for (auto& r : records) resumed[r.env].push_back(std::move(r));
  return resumed;
}

}  // namespace

int tune_env_grid(const RunPlan& plan, const TunePlan& tp) {
  const int repeats = plan.repeat;
  const int rounds = tp.rounds;
  const std::vector<EnvCombination> grid = grid_combinations(tp);
  // --resume: combinations an earlier sweep finished (their records are streamed only then).
  const auto resumed = resumed_records(plan, tp);

  JobSweep sweep(plan, "launches", rounds * repeats);
  GridState st;
  const int m = static_cast<int>(grid.size());
  st.out.assign(grid.size(), false);
  st.rounds_done.assign(grid.size(), 0);
  for (std::size_t k = 0; k < grid.size(); ++k) {
    if (auto it = resumed.find(env_label(grid[k])); it != resumed.end()) {
      sweep.keep(it->second);
      st.out[k] = true;
      ++st.skipped;
      ++st.finished;
    }
  }
  run_rounds(sweep, grid, rounds, repeats, st);
  if (st.skipped > 0) {
    std::cerr << fmt::format("commbench: note: {} of {} combinations already complete in {}\n",
                             st.skipped, m, tp.resume);
  }
  // A cut sweep's streams end with the incomplete line (check and compare refuse them; --resume
  // reads them); its summaries still hold what finished, their meta marked the same way.
  std::string cut;
  if (st.interrupted) {
    cut = fmt::format("interrupted by signal {} ({}); {} of {} combinations finished",
                      st.interrupted, ::strsignal(st.interrupted), st.finished, m);
    sweep.abandon(1, cut);
  }
  // The summaries' environment is the baseline's: the environment as it is.
  auto results = sweep.finish(!st.interrupted, [&](RunMeta& meta) {
    meta.environment = steering_environment();
    meta.environment_mismatch.clear();
    meta.env_failures = st.failures;
    if (!cut.empty()) meta.incomplete = {{"exit_code", 1}, {"reason", cut}};
  });
  if (!results.empty()) advise(results, grid, tp, st);
  if (st.interrupted) {
    runtime_error(
        "interrupted by signal {} ({}); {} of {} combinations finished and were written{}",
        st.interrupted, ::strsignal(st.interrupted), st.finished, m,
        tp.resume.empty() && !sweep.streams() ? std::string()
                                              : "; continue with --resume on the .jsonl output");
  }
  if (st.finished == 0) runtime_error("every combination failed (first: {})", st.failures.front());
  return 0;
}

}  // namespace cb
