#include "jobs/tune.hpp"

#include <iostream>
#include <memory>
#include <sstream>

#include "collectives/backends/registry.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/file_identity.hpp"
#include "common/units.hpp"
#include "jobs/run.hpp"
#include "report/report_format.hpp"
#include "report/tune_text.hpp"

namespace cb {

namespace {

// Collects the run's records and, at the end, prints and writes the advice.
class TuneWriter : public Writer {
 public:
  TuneWriter(TuneRequest rq, TuneOptions options, TuneText text)
      : rq_(std::move(rq)), options_(options), text_(text) {}
  void begin(const RunMeta&) override {}
  void add(const ResultRecord& r) override { records_.push_back(r); }
  void finish() override {
    auto ranges = recommend(records_, options_);
    if (text_.candidates) print_candidates(records_, kShownCandidates, std::cout);
    std::ostringstream advice;
    print_advice(ranges,
                 "the algorithm to use per size range (speedup over default, geometric mean; "
                 "margin: the gain a forced algorithm had to exceed)",
                 advice);
    print_tune_text(text_, advice.str());
    write_tuning_files(rq_, ranges);
  }

 private:
  TuneRequest rq_;
  TuneOptions options_;
  TuneText text_;
  std::vector<ResultRecord> records_;
};

bool env_grid(const TuneRequest& tq) {
  return !tq.env.empty() || !tq.env_grid.empty();
}

}  // namespace

void write_tuning_files(const TuneRequest& rq, const std::vector<TuneRange>& ranges) {
  const auto& files = tuning_files();
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (!rq.emit[i].empty()) write_file_atomically(rq.emit[i], files[i].write(ranges));
  }
}

int round_count(const TuneRequest& tq) {
  if (tq.rounds.empty()) return 5;
  const std::int64_t n = parse_int(tq.rounds, "--rounds");
  if (n < 1 || n > 1000) usage_error("invalid --rounds '{}': expected 1 to 1000", tq.rounds);
  return static_cast<int>(n);
}

TuneOptions check_tune_request(const TuneRequest& tq, const std::vector<std::string>& outputs) {
  TuneOptions options;
  double gain = parse_double(tq.min_gain, "--min-gain");
  if (gain < 0) usage_error("invalid --min-gain '{}': expected a percentage >= 0", tq.min_gain);
  options.min_gain = gain / 100.0;
  round_count(tq);
  std::vector<NamedFile> files;
  for (const auto& path : outputs) files.push_back({"--output", path});
  const auto& kinds = tuning_files();
  for (std::size_t i = 0; i < tq.emit.size(); ++i) {
    if (tq.emit[i].empty()) continue;
    check_output_directory(tq.emit[i]);
    files.push_back({kinds[i].option, tq.emit[i]});
  }
  if (!tq.emit_env.empty()) {
    check_output_directory(tq.emit_env);
    files.push_back({"--emit-env", tq.emit_env});
  }
  // --resume may be the --output it continues (docs/tune.md): its records are read first.
  check_distinct_files(files, {{"--env-grid", tq.env_grid}});
  if (env_grid(tq)) return options;
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
  return options;
}

TuneText tune_text(const RunRequest& rq, const TuneRequest& tq) {
  // The table for people is the one format whose records tune shows its own way.
  const OutputFormat* f = find_format_named(rq.format, Writes::Results);
  const bool people = f && f->results == make_table_writer;
  if (tq.side_by_side && !people) {
    usage_error("--side-by-side applies to --format table: '{}' holds every candidate already",
                rq.format);
  }
  return {people && !tq.side_by_side, !people};
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
  const TuneOptions options = check_tune_request(tq, rq.outputs);
  check_run_request(rq);
  const TuneText text = tune_text(rq, tq);
  RunRequest shown = rq;
  shown.results_to_stdout = !text.candidates;
  if (env_grid(tq)) return tune_env_grid(shown, tq, options, text);
  return run(shown,
             [tq, options, text] { return std::make_unique<TuneWriter>(tq, options, text); });
}

}  // namespace cb
