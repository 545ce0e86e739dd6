#include "app/compare.hpp"

#include <fmt/format.h>

#include <iostream>
#include <sstream>

#include "app/output_flags.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/file_identity.hpp"
#include "common/stop_line.hpp"
#include "common/units.hpp"
#include "report/compare/compare.hpp"
#include "report/compare/compare_output.hpp"
#include "report/format/report_format.hpp"
#include "report/format/result_reader.hpp"

namespace cb {

namespace {

// "5", "5%" or "2.5" percent -> fraction.
double parse_percent(std::string text, const char* what) {
  if (!text.empty() && text.back() == '%') text.pop_back();
  double v = parse_double(text, what);
  if (v < 0) usage_error("invalid {} '{}': expected a percentage >= 0", what, text);
  return v / 100;
}

CompareOptions validate(const CompareRequest& rq) {
  CompareOptions o;
  o.threshold = parse_percent(rq.threshold, "--threshold");
  o.level_threshold = parse_percent(rq.level_threshold, "--level-threshold");
  o.noise_factor = parse_double(rq.noise_factor, "--noise-factor");
  if (o.noise_factor < 0) {
    usage_error("invalid --noise-factor '{}': expected a number >= 0", rq.noise_factor);
  }
  o.latency_bytes = parse_size(rq.latency_bytes, "--latency-bytes");
  o.fail_on_missing = rq.fail_on_missing;
  o.alpha = parse_double(rq.alpha, "--alpha");
  if (!(o.alpha > 0 && o.alpha < 1)) {
    usage_error("invalid --alpha '{}': expected a level between 0 and 1, e.g. 0.01", rq.alpha);
  }
  return o;
}

}  // namespace

const Flags<CompareRequest>& compare_flags() {
  using C = CompareRequest;
  static const Flags<C> flags = and_then(
      {required(list_flag("FILES", &C::files,
                          "baseline result files or directories of earlier runs (.json, .jsonl, "
                          ".csv), then the new result file"),
                2),
       value_flag("--threshold", &C::threshold,
                  "effect floor of a single record, percent: the lower confidence bound of its "
                  "ratio must exceed 1 + this (default 25, i.e. 1.25x)"),
       value_flag("--level-threshold", &C::level_threshold,
                  "effect floor of the level test (all records together), percent (default 5)"),
       value_flag("--noise-factor", &C::noise_factor,
                  "noise band = factor x max((p99-p50)/p50) of both records; 0 = off (default 1)"),
       value_flag("--latency-bytes", &C::latency_bytes,
                  "compare time below this size, busbw from it (default 64K)"),
       value_flag("--alpha", &C::alpha,
                  "1 - confidence of the launch tests, family-wise over the records (default "
                  "0.01)"),
       toggle_flag("--fail-on-missing", &C::fail_on_missing,
                   "records only in BASE count as regressions")},
      report_flags(&C::format, &C::output, kCompareFormats));
  return flags;
}

int compare(const CompareRequest& rq) {
  end_with_one_line_on_stop("compare");
  CompareOptions options = validate(rq);
  const CompareWriter& format = kCompareFormats.named(rq.format);
  const CompareWriter* file_format = nullptr;
  if (!rq.output.empty()) {
    file_format = &kCompareFormats.for_path(rq.output);
    check_output_directory(rq.output);
  }
  std::vector<NamedFile> inputs = {{"NEW", rq.files.back()}};
  std::vector<std::string> base_paths;
  for (std::size_t i = 0; i + 1 < rq.files.size(); ++i) {
    for (const auto& path : result_paths(rq.files[i])) {
      base_paths.push_back(path);
      inputs.push_back({"BASE", path});
    }
  }
  check_distinct_files({{"--output", rq.output}}, inputs);
  std::vector<ResultFile> base;
  for (const auto& path : base_paths) {
    base.push_back(read_result_file(path));
    require_complete(base.back(), "compare");
  }
  ResultFile next = read_result_file(rq.files.back());
  require_complete(next, "compare");
  CompareReport report = compare_results(base, next, options);

  format.write(report, std::cout);
  if (format.records_only) {  // the verdict and warnings go to stderr
    std::cerr << "commbench: " << report.headline << "\n";
    for (const auto& w : report.warnings) std::cerr << "commbench: warning: " << w << "\n";
  }
  if (file_format) {
    std::ostringstream text;
    file_format->write(report, text);
    write_file_atomically(rq.output, text.str());
  }
  if (report.outcome == CompareOutcome::Ok) return 0;
  const ErrorKind kind = report.outcome == CompareOutcome::Invalid      ? ErrorKind::Validation
                         : report.outcome == CompareOutcome::Regression ? ErrorKind::Regression
                                                                        : ErrorKind::Inconclusive;
  // A records-only format has given the verdict its stderr line, the first, already.
  if (format.records_only) return exit_code(kind);
  fail(kind, "{}", report.headline);
}

}  // namespace cb
