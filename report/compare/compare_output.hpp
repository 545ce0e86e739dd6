// The compare report as a table (terminal), CSV, JSON (commbench/compare/v1) or Markdown (fit for
// a pull-request comment).
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>

#include "common/schema.hpp"
#include "report/compare/compare.hpp"

namespace cb {

// The report in each format it has (rows of report/format/report_format.hpp).
void write_compare_table(const CompareReport& r, std::ostream& out);
void write_compare_csv(const CompareReport& r, std::ostream& out);  // the comparisons only
void write_compare_json(const CompareReport& r, std::ostream& out);
void write_compare_md(const CompareReport& r, std::ostream& out);

// A change as a signed percentage with one decimal ("+40.0%"); beyond ±1000% it is shown as
// ">+1000%" or "<-1000%" (a figure that large says only "far off").
std::string percent_change(double fraction);

}  // namespace cb
