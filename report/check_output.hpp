// The check report as a table (terminal), JSON (commbench/check/v1), Markdown or JUnit XML.
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>

#include "common/schema.hpp"
#include "report/check.hpp"
#include "report/junit.hpp"

namespace cb {

// format: table, json or md. Throws a usage Error naming the accepted formats.
void write_check_report(const CheckReport& report, std::string_view format, std::ostream& out);
void check_check_format(std::string_view format);

// One testcase per requirement; failed warnings pass and say so in system-out.
JUnitSuite check_junit_suite(const CheckReport& report, const std::string& timestamp,
                             const std::string& hostname);

}  // namespace cb
