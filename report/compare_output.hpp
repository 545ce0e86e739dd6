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

}  // namespace cb
