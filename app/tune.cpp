#include "app/tune.hpp"

#include <iostream>
#include <memory>
#include <sstream>

#include "app/run.hpp"
#include "collectives/backends/registry.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/file_identity.hpp"
#include "common/units.hpp"
#include "report/format/writers.hpp"
#include "report/tune/tune_text.hpp"

namespace cb {

namespace {

// Collects the run's records and, at the end, prints and writes the advice.
class TuneWriter : public Writer {
 public:
  explicit TuneWriter(TunePlan tp) : tp_(std::move(tp)) {}
  void begin(const RunMeta&) override {}
  void add(const ResultRecord& r) override { records_.push_back(r); }
  void finish() override {
    auto ranges = recommend(records_, tp_.options);
    if (tp_.text.candidates) print_candidates(records_, kShownCandidates, std::cout);
    std::ostringstream advice;
    print_advice(ranges,
                 "the algorithm to use per size range (speedup over default, geometric mean; "
                 "margin: the gain a forced algorithm had to exceed)",
                 advice);
    print_tune_text(tp_.text, advice.str());
    write_tuning_files(tp_.emit, ranges);
  }

 private:
  TunePlan tp_;
  std::vector<ResultRecord> records_;
};

using T = TuneRequest;

Flags<T> make_tune_flags() {
  Flags<T> f = {value_flag("--min-gain", &T::min_gain,
                           "percent a forced algorithm must beat default by (default 2)")};
  for (const auto& file : tuning_files()) {
    Flag<T> row;
    row.names = file.option;
    row.help = file.help;
    row.text = [option = file.option](T& tq) -> std::string& { return tq.emit[option]; };
    f.push_back(std::move(row));
  }
  f.push_back(list_flag("--env", &T::env,
                        "NAME=v1,v2,...: a grid axis of environment values, each combination a "
                        "fresh job (\\, is a comma inside a value); repeatable"));
  f.push_back(value_flag("--env-grid", &T::env_grid,
                         "TOML file with an [env] table of NAME = [values] (added to --env)"));
  f.push_back(value_flag("--resume", &T::resume,
                         "skip the combinations whose records a .jsonl from an earlier sweep "
                         "holds"));
  f.push_back(value_flag("--emit-env", &T::emit_env,
                         "write NAME=VALUE lines of the best combination (NCCL_CONF_FILE, shell)"));
  f.push_back(value_flag("--rounds", &T::rounds,
                         "launches of each combination and of the current environment, "
                         "interleaved in a shuffled order (default 5)"));
  f.push_back(toggle_flag("--side-by-side", &T::side_by_side,
                          "print the run's table, one column group per algorithm and "
                          "combination, instead of one line per candidate at each size"));
  return f;
}

// --rounds as a number (1 to 1000).
int round_count(const TuneRequest& tq) {
  if (tq.rounds.empty()) return 5;
  const std::int64_t n = parse_int(tq.rounds, "--rounds");
  if (n < 1 || n > 1000) usage_error("invalid --rounds '{}': expected 1 to 1000", tq.rounds);
  return static_cast<int>(n);
}

// tune's own values: --min-gain, --rounds, the emitted files' directories and that none of them
// is one of the run's `outputs`, and that --resume, --emit-env and --rounds come with a grid.
TunePlan plan_tune(const TuneRequest& tq, const std::vector<std::string>& outputs) {
  TunePlan tp;
  double gain = parse_double(tq.min_gain, "--min-gain");
  if (gain < 0) usage_error("invalid --min-gain '{}': expected a percentage >= 0", tq.min_gain);
  tp.options.min_gain = gain / 100.0;
  tp.rounds = round_count(tq);
  std::vector<NamedFile> files;
  for (const auto& path : outputs) files.push_back({"--output", path});
  for (const auto& kind : tuning_files()) {
    auto it = tq.emit.find(kind.option);
    if (it == tq.emit.end() || it->second.empty()) continue;
    check_output_directory(it->second);
    files.push_back({kind.option, it->second});
    tp.emit[kind.option] = it->second;
  }
  if (!tq.emit_env.empty()) {
    check_output_directory(tq.emit_env);
    files.push_back({"--emit-env", tq.emit_env});
  }
  // --resume may be the --output it continues (docs/tune.md): its records are read first.
  check_distinct_files(files, {{"--env-grid", tq.env_grid}});
  tp.grid = !tq.env.empty() || !tq.env_grid.empty();
  tp.env = tq.env;
  tp.env_grid = tq.env_grid;
  tp.resume = tq.resume;
  tp.emit_env = tq.emit_env;
  if (tp.grid) return tp;
  if (!tq.resume.empty()) {
    usage_error("--resume applies to environment grids: give --env NAME=v1,v2 or --env-grid FILE");
  }
  if (!tq.emit_env.empty()) {
    usage_error(
        "--emit-env applies to environment grids: give --env NAME=v1,v2 or --env-grid FILE");
  }
  if (!tq.rounds.empty()) {
    usage_error("--rounds applies to environment grids: give --env NAME=v1,v2 or --env-grid FILE");
  }
  return tp;
}

TuneText tune_text(const RunPlan& plan, bool side_by_side) {
  // The table for people is the one format whose records tune shows its own way.
  const RecordsWriter* f = kRecordsFormats.find_named(plan.format);
  const bool people = f && f->make == make_table_writer;
  if (side_by_side && !people) {
    usage_error("--side-by-side applies to --format table: '{}' holds every candidate already",
                plan.format);
  }
  return {people && !side_by_side, !people};
}

}  // namespace

const Flags<TuneRequest>& tune_flags() {
  static const Flags<TuneRequest> flags = make_tune_flags();
  return flags;
}

void write_tuning_files(const std::map<std::string, std::string>& emit,
                        const std::vector<TuneRange>& ranges) {
  for (const auto& file : tuning_files()) {
    if (auto it = emit.find(file.option); it != emit.end() && !it->second.empty()) {
      write_file_atomically(it->second, file.write(ranges));
    }
  }
}

void print_tune_text(const TuneText& text, const std::string& advice) {
  if (!text.advice_to_stderr) {
    std::cout << advice << std::flush;
    return;
  }
  std::istringstream lines(advice);
  for (std::string line; std::getline(lines, line);) std::cerr << "commbench: " << line << "\n";
  std::cerr << std::flush;
}

int tune(const RunRequest& rq, const TuneRequest& tq) {
  TunePlan tp = plan_tune(tq, rq.outputs);
  RunPlan plan = plan_run(rq, tp.grid ? "--env" : nullptr);
  // Its tuning files belong to backends too: with -B given, checked now (plan_run checked the
  // flags); without, where the ranks choose the backends (rank_run).
  for (const auto& [option, path] : tq.emit) {
    if (!path.empty()) plan.own_options.push_back(option);
  }
  if (!plan.backends.empty()) {
    check_own_options({plan.backends, plan.memory, plan.memory_given, plan.gpus, plan.own_options});
  }
  tp.text = tune_text(plan, tq.side_by_side);
  plan.results_to_stdout = !tp.text.candidates;
  if (tp.grid) return tune_env_grid(plan, tp);
  return run_sweep(
      plan, [tp] { return std::make_unique<TuneWriter>(tp); }, command_fingerprint("tune"));
}

}  // namespace cb
