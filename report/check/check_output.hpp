// The check report as a table (terminal), JSON (commbench/check/v1), Markdown or JUnit XML.
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>

#include "common/schema.hpp"
#include "report/check/check.hpp"
#include "report/check/junit.hpp"

namespace cb {

// The report in each format it has (rows of report/format/report_format.hpp).
void write_check_table(const CheckReport& r, std::ostream& out);
void write_check_json(const CheckReport& r, std::ostream& out);
void write_check_md(const CheckReport& r, std::ostream& out);

// One testcase per requirement; failed warnings pass and say so in system-out.
JUnitSuite check_junit_suite(const CheckReport& report, const std::string& timestamp,
                             const std::string& hostname);

}  // namespace cb
