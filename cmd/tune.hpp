// `commbench tune`: options beyond run's, the advice table and the files that apply it, and the
// environment grid (each combination a fresh job).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "cmd/run.hpp"
#include "report/tune.hpp"

namespace cb {

struct TuneRequest {
  std::vector<std::string> emit;  // one FILE per tuning_files() entry (--emit-...), empty: none
  std::string min_gain = "2";
  std::vector<std::string> env;  // --env NAME=v1,v2 (repeatable)
  std::string env_grid;          // --env-grid FILE.toml
  std::string resume;            // --resume FILE.jsonl
  std::string emit_env;          // --emit-env FILE
};

// The advice as a commented table: per backend, collective, dtype, op and placement, what to use
// in each size range.
void print_advice(const std::vector<TuneRange>& ranges, const std::string& what, std::ostream& out);
// The backends' tuning files (--emit-ompi-rules, --emit-nccl-tuner, ...) from the advice.
void write_tuning_files(const TuneRequest& rq, const std::vector<TuneRange>& ranges);

// `tune --env/--env-grid`: every combination of the grid (and the baseline, the environment as
// it is) as fresh jobs; one result set with `env` on every record; advice over combinations and
// algorithms; --emit-env; failed combinations recorded and skipped; --resume; Ctrl-C keeps what
// finished.
int execute_env_grid(const RunRequest& rq, const TuneRequest& tq, const TuneOptions& options);

}  // namespace cb
