#include "report/check/check_output.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <ostream>

#include "common/text_table.hpp"
#include "report/format/markdown.hpp"

namespace cb {

namespace {

using json = nlohmann::ordered_json;  // "schema" first

// PASS, FAIL (error severity) or WARN (warning severity, not met).
std::string status(const RequirementResult& r) {
  if (r.passed) return "PASS";
  return r.severity == Severity::Error ? "FAIL" : "WARN";
}

std::string sources(const CheckReport& r) {
  std::string s;
  for (const auto& f : r.result_files) s += (s.empty() ? "" : ", ") + f;
  std::string out = s.empty() ? "no result files" : "results from " + s;
  if (!r.topology_source.empty()) out += "; topology from " + r.topology_source;
  if (!r.links_source.empty()) out += "; links from " + r.links_source;
  return out;
}

}  // namespace

void write_check_table(const CheckReport& r, std::ostream& out) {
  out << fmt::format("# commbench check: {} ({} requirement{}; {})\n", r.spec_path, r.items.size(),
                     r.items.size() == 1 ? "" : "s", sources(r));
  TextTable t;
  using A = TextTable::Align;
  t.set_header({"status", "severity", "kind", "requirement", "measured", "expected"},
               {A::Left, A::Left, A::Left, A::Left, A::Left, A::Left});
  for (const auto& i : r.items) {
    t.add_row({status(i), severity_name(i.severity), i.kind, i.name, i.measured, i.expected});
  }
  t.print(out, "# ");
  for (const auto& i : r.items) {
    for (const auto& d : i.details) {
      if (!i.passed) out << fmt::format("# {} {}: {}\n", status(i), i.name, d);
    }
  }
  out << "# " << r.summary() << "\n" << std::flush;
}

void write_check_json(const CheckReport& r, std::ostream& out) {
  json doc = {
      {"schema", kCheckSchema},
      {"spec", r.spec_path},
      {"name", r.spec_name},
      {"result_files", r.result_files},
      {"topology_source", r.topology_source.empty() ? json(nullptr) : json(r.topology_source)},
      {"links_source", r.links_source.empty() ? json(nullptr) : json(r.links_source)},
      {"summary",
       {{"passed", r.passed()},
        {"failed", r.failed()},
        {"warnings", r.warnings()},
        {"ok", r.failed() == 0}}},
      {"requirements", json::array()}};
  for (const auto& i : r.items) {
    doc["requirements"].push_back(
        {{"name", i.name},
         {"kind", i.kind},
         {"line", i.line},
         {"severity", severity_name(i.severity)},
         {"status", i.passed ? "pass" : (i.severity == Severity::Error ? "fail" : "warn")},
         {"measured", i.measured},
         {"expected", i.expected},
         {"details", i.details}});
  }
  out << doc.dump(1) << "\n" << std::flush;
}

void write_check_md(const CheckReport& r, std::ostream& out) {
  out << fmt::format(
      "### commbench check {}: {}\n\n", md_escape(r.spec_name),
      r.failed() > 0 ? fmt::format("**{} failed**", r.failed()) : std::string("passed"));
  out << md_escape(sources(r)) << " · " << r.summary() << "\n\n";
  MarkdownTable t;
  t.set_header({"status", "severity", "kind", "requirement", "measured", "expected"});
  for (const auto& i : r.items) {
    std::string s = status(i);
    t.add_row({i.passed ? s : "**" + s + "**", severity_name(i.severity), i.kind, md_escape(i.name),
               md_escape(i.measured), md_escape(i.expected)});
  }
  t.print(out);
  bool any = false;
  for (const auto& i : r.items) {
    if (i.passed || i.details.empty()) continue;
    if (!any) out << "\n";
    any = true;
    out << fmt::format("- **{}** {}:", status(i), md_escape(i.name));
    for (const auto& d : i.details) out << "\n  - " << md_escape(d);
    out << "\n";
  }
  out << std::flush;
}

JUnitSuite check_junit_suite(const CheckReport& report, const std::string& timestamp,
                             const std::string& hostname) {
  JUnitSuite suite;
  suite.name = "commbench check " + report.spec_name;
  suite.timestamp = timestamp;
  suite.hostname = hostname;
  for (const auto& i : report.items) {
    JUnitCase c;
    c.classname = "commbench.check." + i.kind;
    c.name = i.name;
    std::string summary = fmt::format("measured: {}\nexpected: {}", i.measured, i.expected);
    std::string details;
    for (const auto& d : i.details) details += "\n" + d;
    if (!i.passed && i.severity == Severity::Error) {
      c.failure_message = fmt::format("{} (expected {})", i.measured, i.expected);
      c.failure_type = "requirement";
      c.failure_text = summary + details;
    }
    if (i.passed) {
      c.system_out = summary;
    } else if (i.severity == Severity::Warning) {
      c.system_out = "WARNING: not met (severity warning, does not fail)\n" + summary + details;
    }
    suite.cases.push_back(std::move(c));
  }
  return suite;
}

}  // namespace cb
