// `tune` as work: a run over every algorithm whose records, at the end, become advice per size
// range and the files that apply it; with --env, a sweep of fresh jobs over an environment grid.
#pragma once

#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "app/flags.hpp"
#include "app/run_request.hpp"
#include "common/tune_range.hpp"
#include "report/tune/tune.hpp"

namespace cb {

// tune's own option values as typed (run's are a RunRequest beside them).
struct TuneRequest {
  std::map<std::string, std::string> emit;  // FILE by tuning file option (--emit-...)
  std::string min_gain = "2";
  std::vector<std::string> env;  // --env NAME=v1,v2 (repeatable)
  std::string env_grid;          // --env-grid FILE.toml
  std::string resume;            // --resume FILE.jsonl
  std::string emit_env;          // --emit-env FILE
  std::string rounds;  // --rounds N: launches of each combination and the reference (default 5)
  bool side_by_side = false;  // --side-by-side: the run's table, a column group per candidate
};

// tune's own flags (the backends' tuning files from the registry included), after run's.
const Flags<TuneRequest>& tune_flags();

// Where tune's text goes: with --format table, stdout gets per size one line per candidate
// (unless --side-by-side asks for the run's table) and the advice; with a document format
// (csv, json, ...) stdout holds exactly the document and the advice goes to stderr, each line
// as a `commbench: ` line (so that it passes from a rank through the launcher as its notes do).
struct TuneText {
  bool candidates = false;  // print the candidate lines instead of the run's table
  bool advice_to_stderr = false;
};
// Prints the advice's text where `text` says.
void print_tune_text(const TuneText& text, const std::string& advice);

// tune's plan: its own values checked and typed.
struct TunePlan {
  TuneOptions options;                      // --min-gain
  std::map<std::string, std::string> emit;  // the tuning files asked for, FILE by option
  bool grid = false;                        // --env or --env-grid given
  std::vector<std::string> env;             // --env axes, as given
  std::string env_grid, resume, emit_env;   // files
  int rounds = 5;                           // --rounds
  TuneText text;
};

// `tune`: plans tune's values (--min-gain, --rounds, the emitted files' directories and that
// none of them is one of the run's outputs, --resume, --emit-env and --rounds only with a grid),
// then the run's, then --side-by-side against --format; runs; then the advice on stdout and the
// tuning files; the grid when --env or --env-grid is given.
int tune(const RunRequest& rq, const TuneRequest& tq);

// The backends' tuning files (--emit-ompi-rules, --emit-nccl-tuner, ...) from the advice.
void write_tuning_files(const std::map<std::string, std::string>& emit,
                        const std::vector<TuneRange>& ranges);

// `tune --env/--env-grid`: every combination of the grid (and the baseline, the environment as
// it is) as fresh jobs; one result set with `env` on every record; advice over combinations and
// algorithms; --emit-env; failed combinations recorded and skipped; --resume; Ctrl-C keeps what
// finished.
int tune_env_grid(const RunPlan& plan, const TunePlan& tp);

}  // namespace cb
