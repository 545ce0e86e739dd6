#include "report/check/junit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>

#include "report/xml.hpp"

namespace cb {

void write_junit(const JUnitSuite& suite, std::ostream& out) {
  auto failures = std::count_if(suite.cases.begin(), suite.cases.end(),
                                [](const JUnitCase& c) { return c.failure_message.has_value(); });
  std::string name = xml_escape(suite.name);
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << fmt::format("<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\">\n", name,
                     suite.cases.size(), failures);
  out << fmt::format(
      "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\" "
      "time=\"0\"{}{}>\n",
      name, suite.cases.size(), failures,
      suite.timestamp.empty() ? "" : fmt::format(" timestamp=\"{}\"", xml_escape(suite.timestamp)),
      suite.hostname.empty() ? "" : fmt::format(" hostname=\"{}\"", xml_escape(suite.hostname)));
  for (const auto& c : suite.cases) {
    out << fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"0\">\n",
                       xml_escape(c.classname), xml_escape(c.name));
    if (c.failure_message) {
      out << fmt::format("      <failure message=\"{}\" type=\"{}\">{}</failure>\n",
                         xml_escape(*c.failure_message), xml_escape(c.failure_type),
                         xml_escape(c.failure_text));
    }
    if (!c.system_out.empty()) {
      out << fmt::format("      <system-out>{}</system-out>\n", xml_escape(c.system_out));
    }
    out << "    </testcase>\n";
  }
  out << "  </testsuite>\n</testsuites>\n";
}

}  // namespace cb
