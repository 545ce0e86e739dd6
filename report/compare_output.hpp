// The compare report as a table (terminal), CSV, JSON (commbench/compare/v1) or Markdown (fit for
// a pull-request comment).
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>

#include "common/schema.hpp"
#include "report/compare.hpp"

namespace cb {

// format: table, csv, json or md. Throws a usage Error naming the accepted formats.
void write_compare_report(const CompareReport& report, std::string_view format, std::ostream& out);
void check_compare_format(std::string_view format);

// A change as a signed percentage with one decimal ("+40.0%"); beyond ±1000% it is shown as
// ">+1000%" or "<-1000%" (a figure that large says only "far off").
std::string percent_change(double fraction);

}  // namespace cb
