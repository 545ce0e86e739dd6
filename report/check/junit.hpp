// JUnit XML, the report format CI systems (Jenkins, GitLab, GitHub test reporters) ingest: one
// <testsuite> of <testcase>s, a failing case carrying a <failure> with a message and details.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace cb {

struct JUnitCase {
  std::string classname;
  std::string name;
  std::optional<std::string> failure_message;  // set: the case failed
  std::string failure_type;
  std::string failure_text;  // body of <failure>
  std::string system_out;    // what was measured, for passing cases too
};

struct JUnitSuite {
  std::string name;
  std::string timestamp;  // ISO 8601
  std::string hostname;
  std::vector<JUnitCase> cases;
};

void write_junit(const JUnitSuite& suite, std::ostream& out);

}  // namespace cb
