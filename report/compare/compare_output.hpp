// The compare report as a table (terminal), CSV, JSON (commbench/compare/v1) or Markdown (fit for
// a pull-request comment).
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>

#include "common/schema.hpp"
#include "report/compare/compare_report.hpp"
#include "report/format/report_format.hpp"

namespace cb {

// The report in each format it has.
void write_compare_table(const CompareReport& r, std::ostream& out);
void write_compare_csv(const CompareReport& r, std::ostream& out);  // the comparisons only
void write_compare_json(const CompareReport& r, std::ostream& out);
void write_compare_md(const CompareReport& r, std::ostream& out);

// compare's writers by format name (rows of kOutputFormats, report/format/report_format.hpp).
struct CompareWriter {
  std::string_view format;
  void (*write)(const CompareReport&, std::ostream&);
  bool records_only;  // holds records but no verdict line: compare puts that on stderr
};
// clang-format off
inline constexpr CompareWriter kCompareWriters[] = {
//   format   write                records_only
    {"table", write_compare_table, false},
    {"csv",   write_compare_csv,   true},
    {"json",  write_compare_json,  false},
    {"md",    write_compare_md,    false},
};
// clang-format on
inline constexpr FormatRows<CompareWriter> kCompareFormats{kCompareWriters};

// A change as a signed percentage with one decimal ("+40.0%"); beyond ±1000% it is shown as
// ">+1000%" or "<-1000%" (a figure that large says only "far off").
std::string percent_change(double fraction);

}  // namespace cb
