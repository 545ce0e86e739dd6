// The check report as a table (terminal), JSON (commbench/check/v1), Markdown or JUnit XML.
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>

#include "common/schema.hpp"
#include "report/check/check_report.hpp"
#include "report/check/junit.hpp"
#include "report/format/report_format.hpp"

namespace cb {

// The report in each format it has.
void write_check_table(const CheckReport& r, std::ostream& out);
void write_check_json(const CheckReport& r, std::ostream& out);
void write_check_md(const CheckReport& r, std::ostream& out);

// check's writers by format name (rows of kOutputFormats, report/format/report_format.hpp).
struct CheckWriter {
  std::string_view format;
  void (*write)(const CheckReport&, std::ostream&);
};
// clang-format off
inline constexpr CheckWriter kCheckWriters[] = {
    {"table", write_check_table},
    {"json",  write_check_json},
    {"md",    write_check_md},
};
// clang-format on
inline constexpr FormatRows<CheckWriter> kCheckFormats{kCheckWriters};

// One testcase per requirement; failed warnings pass and say so in system-out.
JUnitSuite check_junit_suite(const CheckReport& report, const std::string& timestamp,
                             const std::string& hostname);

}  // namespace cb
