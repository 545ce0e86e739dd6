// `commbench tune`: a run over every algorithm (-A all by default), then, per collective and
// size range, the algorithm to use, and files that apply it: an Open MPI coll/tuned rules file
// and an NCCL tuner-plugin configuration.
#include <fmt/format.h>

#include <iostream>

#include "cmd/run.hpp"
#include "cmd/subcommands.hpp"
#include "cmd/tune.hpp"
#include "collectives/backends/registry.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/text_table.hpp"
#include "common/units.hpp"
#include "report/report_format.hpp"
#include "report/tune.hpp"

namespace cb {

namespace {

// Collects the run's records and, at the end, prints and writes the advice.
class TuneWriter : public Writer {
 public:
  TuneWriter(TuneRequest rq, TuneOptions options) : rq_(std::move(rq)), options_(options) {}
  void begin(const RunMeta&) override {}
  void add(const ResultRecord& r) override { records_.push_back(r); }
  void finish() override {
    auto ranges = recommend(records_, options_);
    print_advice(ranges,
                 "the algorithm to use per size range (speedup over default, geometric mean)",
                 std::cout);
    write_tuning_files(rq_, ranges);
  }

 private:
  TuneRequest rq_;
  TuneOptions options_;
  std::vector<ResultRecord> records_;
};

}  // namespace

void print_advice(const std::vector<TuneRange>& ranges, const std::string& what,
                  std::ostream& out) {
  TextTable t;
  t.set_header({"backend", "collective", "dtype", "op", "placement", "sizes", "use", "speedup"},
               {TextTable::Align::Left, TextTable::Align::Left, TextTable::Align::Left,
                TextTable::Align::Left, TextTable::Align::Left, TextTable::Align::Right,
                TextTable::Align::Left, TextTable::Align::Right});
  for (const auto& r : ranges) {
    std::string sizes =
        r.min_bytes == r.max_bytes
            ? format_size(r.min_bytes)
            : fmt::format("{} - {}", format_size(r.min_bytes), format_size(r.max_bytes));
    t.add_row({r.backend, r.collective, r.dtype, r.op, r.placement, sizes, r.algorithm,
               fmt::format("{:.2f}x", r.speedup)});
  }
  out << "#\n# tune: " << what << "\n";
  t.print(out, "# ");
  out << std::flush;
}

void write_tuning_files(const TuneRequest& rq, const std::vector<TuneRange>& ranges) {
  const auto& files = tuning_files();
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (!rq.emit[i].empty()) write_file_atomically(rq.emit[i], files[i].write(ranges));
  }
}

void register_tune(CLI::App& app, Action& action) {
  auto rq = std::make_shared<RunRequest>();
  auto tq = std::make_shared<TuneRequest>();
  rq->algorithms = "all";
  CLI::App* tune = app.add_subcommand(
      "tune", "sweep every algorithm and recommend one per collective and size range");
  add_run_options(tune, *rq);
  tune->add_option("--min-gain", tq->min_gain,
                   "percent a forced algorithm must beat default by (default 2)");
  const auto& files = tuning_files();
  tq->emit.resize(files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    tune->add_option(files[i].option, tq->emit[i], files[i].help);
  }
  tune->add_option("--env", tq->env,
                   "NAME=v1,v2,...: a grid axis of environment values, each combination a fresh "
                   "job (\\, is a comma inside a value); repeatable");
  tune->add_option("--env-grid", tq->env_grid,
                   "TOML file with an [env] table of NAME = [values] (added to --env)");
  tune->add_option("--resume", tq->resume,
                   "skip the combinations whose records a .jsonl from an earlier sweep holds");
  tune->add_option("--emit-env", tq->emit_env,
                   "write NAME=VALUE lines of the best combination (NCCL_CONF_FILE, shell)");
  tune->callback([rq, tq, &action] {
    TuneOptions options;
    double gain = parse_double(tq->min_gain, "--min-gain");
    if (gain < 0) usage_error("invalid --min-gain '{}': expected a percentage >= 0", tq->min_gain);
    options.min_gain = gain / 100.0;
    for (const auto& path : tq->emit) {
      if (!path.empty()) check_output_directory(path);
    }
    if (!tq->emit_env.empty()) check_output_directory(tq->emit_env);
    if (!tq->env.empty() || !tq->env_grid.empty()) {
      action = [rq, tq, options] { return execute_env_grid(*rq, *tq, options); };
      return;
    }
    for (const char* option : {"--resume", "--emit-env"}) {
      if ((std::string(option) == "--resume" ? tq->resume : tq->emit_env).empty()) continue;
      usage_error("{} applies to environment grids: give --env NAME=v1,v2 or --env-grid FILE",
                  option);
    }
    rq->extra_writer = [tq, options] { return std::make_unique<TuneWriter>(*tq, options); };
    action = [rq] { return execute_run(*rq); };
  });
}

}  // namespace cb
