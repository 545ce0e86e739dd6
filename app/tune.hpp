// `tune` as work: a run over every algorithm whose records, at the end, become advice per size
// range and the files that apply it; with --env, a sweep of fresh jobs over an environment grid.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "app/run_request.hpp"
#include "common/tune_range.hpp"
#include "report/tune/tune.hpp"

namespace cb {

struct TuneRequest {
  std::vector<std::string> emit;  // one FILE per tuning_files() entry (--emit-...), empty: none
  std::string min_gain = "2";
  std::vector<std::string> env;  // --env NAME=v1,v2 (repeatable)
  std::string env_grid;          // --env-grid FILE.toml
  std::string resume;            // --resume FILE.jsonl
  std::string emit_env;          // --emit-env FILE
  std::string rounds;  // --rounds N: launches of each combination and the reference (default 5)
  bool side_by_side = false;  // --side-by-side: the run's table, a column group per candidate
};

// Where tune's text goes: with --format table, stdout gets per size one line per candidate
// (unless --side-by-side asks for the run's table) and the advice; with a document format
// (csv, json, ...) stdout holds exactly the document and the advice goes to stderr, each line
// as a `commbench: ` line (so that it passes from a rank through the launcher as its notes do).
struct TuneText {
  bool candidates = false;  // print the candidate lines instead of the run's table
  bool advice_to_stderr = false;
};
TuneText tune_text(const RunRequest& rq, const TuneRequest& tq);
// Prints the advice's text where `text` says.
void print_tune_text(const TuneText& text, const std::string& advice);

// Checks tune's own values before any work: --min-gain, --rounds, the emitted files'
// directories and that none of them is one of the run's `outputs`, and that --resume and
// --emit-env come with an environment grid.
TuneOptions check_tune_request(const TuneRequest& tq, const std::vector<std::string>& outputs = {});
// --rounds as a number (1 to 1000).
int round_count(const TuneRequest& tq);
// `tune`: the run, then the advice on stdout and the tuning files; the grid when --env or
// --env-grid is given.
int tune(const RunRequest& rq, const TuneRequest& tq);

// The backends' tuning files (--emit-ompi-rules, --emit-nccl-tuner, ...) from the advice.
void write_tuning_files(const TuneRequest& rq, const std::vector<TuneRange>& ranges);

// `tune --env/--env-grid`: every combination of the grid (and the baseline, the environment as
// it is) as fresh jobs; one result set with `env` on every record; advice over combinations and
// algorithms; --emit-env; failed combinations recorded and skipped; --resume; Ctrl-C keeps what
// finished.
int tune_env_grid(const RunRequest& rq, const TuneRequest& tq, const TuneOptions& options,
                  const TuneText& text);

}  // namespace cb
